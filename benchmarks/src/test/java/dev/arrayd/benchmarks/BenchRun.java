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
import java.util.List;

/** Runs {@code bench} in this JVM with captured output, and checks what every run must leave behind. */
final class BenchRun {

    static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final ByteArrayOutputStream err = new ByteArrayOutputStream();
    final int rc;

    BenchRun(String... args) {
        rc = BenchMain.run(new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), false, args);
    }

    String stdout() {
        return out.toString(StandardCharsets.UTF_8);
    }

    String stderr() {
        return err.toString(StandardCharsets.UTF_8);
    }

    String lastLine() {
        return stdout().lines().reduce((a, b) -> b).orElse("");
    }

    /** Exit 0; a RESULT line last matching {@code resultRegex}; the run files; and these PNGs drawn. */
    void assertComplete(Path dir, String resultRegex, String... pngs) throws IOException {
        assertEquals(0, rc, stderr());
        assertTrue(lastLine().matches(resultRegex), lastLine());
        assertEquals(lastLine(), Files.readString(dir.resolve(RunFiles.RESULT)).trim());
        assertTrue(Files.readString(dir.resolve(RunFiles.COMMAND)).startsWith("bin/arrayd bench "));
        assertTrue(Files.readString(dir.resolve(RunFiles.MACHINE)).contains("cores="));
        String section = Files.readString(dir.resolve(RunFiles.SECTION));
        for (String png : pngs) {
            byte[] bytes = Files.readAllBytes(dir.resolve(png));
            assertArrayEquals(PNG_SIGNATURE, Arrays.copyOf(bytes, PNG_SIGNATURE.length), png);
            assertTrue(bytes.length > 5_000, png + ": a drawn chart, not an empty image: " + bytes.length + " bytes");
            assertTrue(section.contains("(" + png + ")"), "the section shows " + png);
        }
        assertTrue(!stderr().contains("\r"), "no rewritten line when stderr is not a terminal");
    }

    /** Rows of a CSV file after the header, which must equal {@code header}; each with {@code columns} fields. */
    static List<String[]> csv(Path file, String header, int columns) throws IOException {
        List<String> lines = Files.readAllLines(file);
        assertEquals(header, lines.getFirst(), file.toString());
        List<String[]> rows = lines.subList(1, lines.size()).stream().map(l -> l.split(",", -1)).toList();
        for (String[] r : rows) {
            assertEquals(columns, r.length, String.join(",", r));
        }
        return rows;
    }
}
