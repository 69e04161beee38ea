package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code bench taskbench} end to end against an in-process daemon, two graphs, a tiny sweep. */
class TaskBenchScenarioTest {

    @Test
    @Timeout(30)
    void writesRunsMetgPlotTaskBenchLinesAndResultLine(@TempDir Path dir) throws Exception {
        Path results = dir.resolve("run");
        BenchRun run = new BenchRun("taskbench", "--in-process", "--graphs", "stencil_1d,fft", "--min-power", "0",
                "--max-power", "2", "--target-ms", "5", "--max-steps", "20", "--warmup", "10", "--out",
                results.toString());
        String metg = "(\\d+\\.\\d|NaN)";
        run.assertComplete(results, "RESULT taskbench metg_stencil_1d_us=" + metg + " metg_fft_us=" + metg
                + " peak_gflops=\\d+\\.\\d{3} width=2", "taskbench.png");
        List<String[]> runs = BenchRun.csv(results.resolve("runs.csv"), "graph,iterations,timesteps,width,tasks,"
                + "dependencies,flops,elapsed_s,flops_per_s,granularity_us,efficiency", 11);
        assertEquals(6, runs.size());
        for (String[] r : runs) {
            long iterations = Long.parseLong(r[1]);
            long tasks = Long.parseLong(r[4]);
            assertEquals(Long.parseLong(r[2]) * 2, tasks);
            assertEquals(ComputeKernel.flopsPerTask(iterations) * tasks, Long.parseLong(r[6]));
            assertTrue(Double.parseDouble(r[7]) > 0 && Double.parseDouble(r[10]) > 0, String.join(",", r));
        }
        assertEquals(3, BenchRun.csv(results.resolve("metg.csv"), "graph,metg50_us,iterations_at_metg,best_efficiency",
                4).size() + 1);
        String log = Files.readString(results.resolve("taskbench.txt"));
        for (String line : List.of("Total Tasks ", "Total Dependencies ", "Total FLOPs ", "Elapsed Time ", "FLOP/s ")) {
            assertTrue(log.contains(line), line);
            assertTrue(run.stdout().contains(line), "printed per run: " + line);
        }
    }

    @Test
    void rejectsAnUnknownGraph() {
        BenchRun run = new BenchRun("taskbench", "--in-process", "--graphs", "tree");
        assertEquals(2, run.rc);
        assertTrue(run.stderr().contains("--graphs: \"tree\""), run.stderr());
    }
}
