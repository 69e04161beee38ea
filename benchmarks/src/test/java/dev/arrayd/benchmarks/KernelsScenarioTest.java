package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bench kernels} end to end against an in-process daemon at tiny sizes: the CPU column always, the
 * two OpenCL columns exactly when this machine has an OpenCL device (PoCL in CI).
 */
class KernelsScenarioTest {

    private static final List<String> KERNELS = List.of("vadd", "saxpy", "sum", "matmul", "softmax");

    @Test
    @Timeout(60)
    void runsEveryKernelInEveryAvailableColumnAndWritesTheReport(@TempDir Path dir) throws Exception {
        boolean openCl = OpenClProbe.unavailableReason().isEmpty();
        List<String> columns = openCl ? List.of("cpu", "cpu_ir", "cpu_ir_strict", "opencl", "opencl_ir", "jocl")
                : List.of("cpu", "cpu_ir", "cpu_ir_strict");
        Path results = dir.resolve("run");
        BenchRun run = new BenchRun("kernels", "--in-process", "--small", "--iterations", "3", "--warmup", "1", "--warmup-seconds", "0",
                "--round-trips", "20", "--out", results.toString());
        String rate = "\\d+\\.\\d{2}";
        StringBuilder regex = new StringBuilder("RESULT kernels");
        for (String k : KERNELS) {
            for (String c : columns) {
                regex.append(' ').append(k).append('_').append(c).append(k.equals("matmul") ? "_GFLOPs=" : "_GBps=")
                        .append(rate);
            }
        }
        regex.append(" launch_cpu_us=\\d+\\.\\d launch_cpu_ir_us=\\d+\\.\\d");
        regex.append(openCl ? " launch_opencl_us=\\d+\\.\\d launch_opencl_ir_us=\\d+\\.\\d jocl_enqueue_us=\\d+\\.\\d "
                + "launch_ratio=\\d+\\.\\d{3} cpu_at_least_pocl=\\d/5 cpu_ir_at_least_pocl=\\d/5" : " opencl=none");
        run.assertComplete(results, regex.toString(), "kernels.png", "roundtrip.png");

        List<String[]> rows = BenchRun.csv(results.resolve("kernels.csv"), "kernel,column,run,wall_us,device_us", 5);
        assertEquals(KERNELS.size() * columns.size() * 3, rows.size());
        List<String[]> summary = BenchRun.csv(results.resolve("summary.csv"),
                "kernel,column,device,runs,median_wall_us,median_device_us,rate,unit,rate_ratio_to_jocl", 9);
        assertEquals(KERNELS.size() * columns.size(), summary.size());
        for (String[] s : summary) {
            assertTrue(KERNELS.contains(s[0]) && columns.contains(s[1]), String.join(",", s));
            assertEquals("3", s[3]);
            assertTrue(Double.parseDouble(s[6]) > 0, "a positive rate: " + String.join(",", s));
            assertEquals(s[0].equals("matmul") ? "GFLOP/s" : "GB/s", s[7]);
        }
        List<String[]> trips = BenchRun.csv(results.resolve("roundtrip.csv"), "column,iteration,micros", 3);
        assertEquals(20 * (columns.size() - 1), trips.size(), "a round trip figure for every column but the strict IR one");
        String section = Files.readString(results.resolve(RunFiles.SECTION));
        assertEquals(!openCl, section.contains("the OpenCL columns did not run"), section);
    }

    @Test
    void rejectsNoRoundTrips() {
        BenchRun run = new BenchRun("kernels", "--in-process", "--round-trips", "0");
        assertEquals(2, run.rc);
        assertTrue(run.stderr().contains("--round-trips: 0"), run.stderr());
    }
}
