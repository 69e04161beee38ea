package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every {@code bench} help text renders cleanly: no picocli warning (an unescaped {@code %} makes one), exit 0. */
class HelpTextTest {

    @Test
    void everyScenarioAndToolPrintsItsHelpWithoutWarnings() {
        List<String> names = new ArrayList<>();
        names.add("");
        BenchMain.scenarios().forEach(s -> names.add(s.name()));
        names.add("jmh");
        names.add("cuda");
        names.add("report");
        PrintStream systemErr = System.err;
        for (String name : names) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            ByteArrayOutputStream traced = new ByteArrayOutputStream(); // picocli's tracer writes to System.err
            int code;
            System.setErr(new PrintStream(traced, true, StandardCharsets.UTF_8));
            try {
                String[] args = name.isEmpty() ? new String[] {"--help"} : new String[] {name, "--help"};
                code = BenchMain.run(new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8), false, args);
            } finally {
                System.setErr(systemErr);
            }
            String all = out + err.toString(StandardCharsets.UTF_8) + traced.toString(StandardCharsets.UTF_8);
            assertEquals(0, code, () -> "bench " + name + " --help: exit code; output:\n" + all);
            assertFalse(all.contains("WARN"), () -> "bench " + name + " --help warns:\n" + all);
            assertTrue(all.contains("Usage:"), () -> "bench " + name + " --help shows no usage:\n" + all);
        }
    }
}
