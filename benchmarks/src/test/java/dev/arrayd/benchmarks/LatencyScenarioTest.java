package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code bench latency} end to end against an in-process daemon, with tiny counts. */
class LatencyScenarioTest {

    private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    private static final String NUMBER = "\\d+\\.\\d{1,3}";

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int bench(String... args) {
        return BenchMain.run(new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), false, args);
    }

    @Test
    @Timeout(30)
    void writesSamplesSummaryPlotAndResultLine(@TempDir Path dir) throws IOException {
        Path results = dir.resolve("run");
        int rc = bench("latency", "--iterations", "60", "--warmup", "40", "--rounds", "3", "--out", results.toString());
        assertEquals(0, rc, err.toString(StandardCharsets.UTF_8));

        List<String> stdout = out.toString(StandardCharsets.UTF_8).lines().toList();
        String last = stdout.getLast();
        // the benchmark's own daemon listens on a Unix socket too: the launch over it is the third method
        assertTrue(last.matches("RESULT latency launch_us=" + NUMBER + " echo_us=" + NUMBER + " ratio=" + NUMBER
                + " uds_launch_us=" + NUMBER + " uds_ratio=" + NUMBER), last);

        List<String> samples = Files.readAllLines(results.resolve("latency.csv"));
        assertEquals("method,round,iteration,micros", samples.getFirst());
        assertEquals(1 + 3 * 60, samples.size());
        Set<String> seen = new HashSet<>();
        for (String row : samples.subList(1, samples.size())) {
            String[] f = row.split(",");
            assertEquals(4, f.length, row);
            assertTrue(f[0].equals("launch") || f[0].equals("echo") || f[0].equals("launch_uds"), row);
            int round = Integer.parseInt(f[1]);
            assertTrue(round >= 1 && round <= 3, row);
            assertTrue(Integer.parseInt(f[2]) >= 0, row);
            assertTrue(Double.parseDouble(f[3]) > 0, row);
            seen.add(f[0] + "/" + round);
        }
        assertEquals(9, seen.size(), "every method in every round: " + seen);

        List<String> summary = Files.readAllLines(results.resolve("summary.csv"));
        assertEquals("method,samples,median_us,p90_us,p99_us,mean_us,min_us,max_us,median_ratio_to_echo",
                summary.getFirst());
        assertEquals(4, summary.size());
        assertTrue(summary.get(1).startsWith("launch,60,"), summary.get(1));
        assertTrue(summary.get(2).startsWith("echo,60,"), summary.get(2));
        assertTrue(summary.get(3).startsWith("launch_uds,60,"), summary.get(3));
        for (String row : summary.subList(1, 4)) {
            double[] v = Arrays.stream(row.split(",")).skip(2).mapToDouble(Double::parseDouble).toArray();
            assertTrue(v[4] <= v[0] && v[0] <= v[1] && v[1] <= v[2] && v[2] <= v[5], "min<=median<=p90<=p99<=max: " + row);
        }

        byte[] png = Files.readAllBytes(results.resolve("latency.png"));
        assertArrayEquals(PNG_SIGNATURE, Arrays.copyOf(png, PNG_SIGNATURE.length));
        assertTrue(png.length > 10_000, "a drawn chart, not an empty image: " + png.length + " bytes");

        String progress = err.toString(StandardCharsets.UTF_8);
        assertTrue(progress.contains("latency: round 3/3"), progress);
        assertTrue(!progress.contains("\r"), "no rewritten line when stderr is not a terminal");
    }

    @Test
    void unknownScenarioPrintsUsageAndExits2() {
        assertEquals(2, bench("no-such-scenario"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("Usage: bench"), err.toString(StandardCharsets.UTF_8));
        assertEquals("", out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void missingScenarioExits2() {
        assertEquals(2, bench());
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("latency"), "lists the scenarios");
    }

    @Test
    void helpOfAScenarioExits0() {
        assertEquals(0, bench("latency", "--help"));
        String help = out.toString(StandardCharsets.UTF_8);
        assertTrue(help.contains("--target") && help.contains("--rounds") && help.contains("--wait"), help);
    }

    @Test
    void badTargetExits2() {
        assertEquals(2, bench("latency", "--target", "localhost"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--target: \"localhost\""));
    }
}
