package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bench python} end to end against an in-process daemon, with small sizes, using the Python client's
 * build environment (client-python is built before this module). Without it the test is skipped with the
 * reason, unless ARRAYD_REQUIRE_PYTHON=1 (CI), where that fails it.
 */
class PythonScenarioTest {

    static final Path PYTHON = Path.of("..", "client-python", "target", "venv", "bin", "python");

    @Test
    @Timeout(180)
    void writesTheRoundsThePlotAndTheResultLine(@TempDir Path dir) throws Exception {
        if (!Files.isExecutable(PYTHON)) {
            String why = "no Python client build at " + PYTHON.toAbsolutePath().normalize();
            if ("1".equals(System.getenv("ARRAYD_REQUIRE_PYTHON"))) {
                throw new AssertionError(why + " (ARRAYD_REQUIRE_PYTHON=1)");
            }
            System.out.println("PythonScenarioTest: SKIPPED: " + why);
            Assumptions.abort(why);
        }
        Path results = dir.resolve("run");
        BenchRun run = new BenchRun("python", "--in-process", "--iterations", "1", "--size", "4", "--launches", "300",
                "--round-trips", "50", "--warmup", "1", "--warmup-seconds", "0", "--python", PYTHON.toString(), "--script",
                Path.of("..", "client-python", "bench", "bench.py").toString(), "--out", results.toString());
        String r = "\\d+\\.\\d+";
        run.assertComplete(results, "RESULT python launch_ratio=" + r + " throughput_of_java=" + r + " upload_of_raw=" + r
                + " download_of_raw=" + r + " download_out_of_raw=" + r + " shm_upload_of_memcpy=" + r + " shm_download_of_memcpy=" + r
                + " shm_download_out_of_memcpy=" + r + " region_upload_of_memcpy=" + r + " region_download_of_memcpy=" + r, "python.png");
        List<String[]> rows = BenchRun.csv(results.resolve("python.csv"), "figure,round,value", 3);
        List<String> figures = rows.stream().map(x -> x[0]).toList();
        for (String f : List.of("launch_us", "echo_us", "launches_per_s", "launch_cpu_us", "java_launches_per_s", "java_launches_before_per_s", "java_launches_after_per_s", "upload_MBps",
                "sink_MBps", "download_MBps", "source_MBps", "download_out_MBps", "source_out_MBps", "staged_upload_MBps", "staged_download_out_MBps", "region_upload_MBps",
                "memcpy_MBps")) {
            assertTrue(figures.contains(f), f + " in " + figures);
        }
        rows.forEach(x -> assertTrue(Double.parseDouble(x[2]) > 0, x[0] + " = " + x[2]));
        assertEquals(1, rows.stream().filter(x -> x[0].equals("launch_us")).count());
    }
}
