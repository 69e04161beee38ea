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
                "--max-power", "2", "--target-ms", "5", "--max-steps", "20", "--warmup", "10", "--warmup-seconds", "0",
                "--iterations", "2", "--out", results.toString());
        String metg = "(\\d+\\.\\d|NaN)";
        run.assertComplete(results, "RESULT taskbench metg_stencil_1d_us=" + metg + " metg_fft_us=" + metg
                + " peak_gflops=\\d+\\.\\d{3} peak_min_gflops=\\d+\\.\\d{3} peak_max_gflops=\\d+\\.\\d{3} width=2 sweeps=2 kernel=ir completion_linger_us=1000",
                "taskbench.png");
        List<String[]> runs = BenchRun.csv(results.resolve("runs.csv"), "sweep,graph,iterations,timesteps,width,tasks,"
                + "dependencies,flops,elapsed_s,flops_per_s,granularity_us,efficiency", 12);
        assertEquals(12, runs.size(), "2 sweeps x 2 graphs x 3 iteration counts");
        for (String[] r : runs) {
            long iterations = Long.parseLong(r[2]);
            long tasks = Long.parseLong(r[5]);
            assertEquals(Long.parseLong(r[3]) * 2, tasks);
            assertEquals(ComputeKernel.flopsPerTask(iterations) * tasks, Long.parseLong(r[7]));
            double efficiency = Double.parseDouble(r[11]);
            assertTrue(Double.parseDouble(r[8]) > 0 && efficiency > 0 && efficiency <= 1, String.join(",", r));
        }
        assertEquals(2, BenchRun.csv(results.resolve("metg.csv"),
                "graph,metg50_us_median,metg50_us_min,metg50_us_max,sweeps_reaching,best_efficiency", 6).size());
        String log = Files.readString(results.resolve("taskbench.txt"));
        for (String line : List.of("Total Tasks ", "Total Dependencies ", "Total FLOPs ", "Elapsed Time ", "FLOP/s ")) {
            assertTrue(log.contains(line), line);
            assertTrue(run.stdout().contains(line), "printed per run: " + line);
        }
        assertTrue(run.stdout().contains("where the time goes: not measured (the daemon runs in the benchmark's JVM"),
                "an in-process daemon's threads cannot be told from the client's: " + run.stdout());
    }

    @Test
    void metgIsTheMedianOfTheSweepsAndNotReachedWhenMostSweepsMissIt() {
        // sweep 0 reaches 50% at 40 µs, sweep 1 at 20 µs, sweep 2 never: the median of {40, 20, never} is 40
        List<TaskBenchRun> runs = List.of(run(0, 40, 0.6), run(0, 10, 0.3), run(1, 20, 0.55), run(1, 5, 0.2),
                run(2, 40, 0.45), run(2, 10, 0.1));
        TaskBenchMetg m = TaskBenchMetg.overSweeps(runs, "g", 3);
        assertEquals(40, m.medianMicros(), 1e-9);
        assertEquals(20, m.minMicros(), 1e-9);
        assertEquals(40, m.maxMicros(), 1e-9);
        assertEquals(2, m.reached());
        assertEquals(0.55, m.bestEfficiency(), 1e-9, "the median of each sweep's best: 0.6, 0.55, 0.45");
        List<TaskBenchRun> mostlyMissed = List.of(run(0, 40, 0.6), run(1, 40, 0.4), run(2, 40, 0.3));
        assertEquals("not reached", TaskBenchMetg.overSweeps(mostlyMissed, "g", 3).median());
    }

    /** A run of graph "g" in {@code sweep} whose granularity is {@code micros} (1 core, 1 task) at {@code efficiency}. */
    private static TaskBenchRun run(int sweep, double micros, double efficiency) {
        long nanos = (long) (micros * 1000);
        double flopsPerSecond = 1e9;
        long flops = (long) (flopsPerSecond * nanos / 1e9);
        return new TaskBenchRun(sweep, "g", 1, 1, 1, 1, 0, flops, nanos, 1, flopsPerSecond / efficiency);
    }

    @Test
    void rejectsAnUnknownGraph() {
        BenchRun run = new BenchRun("taskbench", "--in-process", "--graphs", "tree");
        assertEquals(2, run.rc);
        assertTrue(run.stderr().contains("--graphs: \"tree\""), run.stderr());
    }

    @Test
    void thePeakRunsAsLoweredAsTheDaemonsKernels() {
        TaskBenchScenario plain = new TaskBenchScenario();
        new picocli.CommandLine(plain).parseArgs();
        assertEquals(dev.arrayd.devices.cpu.CpuOptions.defaults().computeNice(), plain.cpuNice());
        TaskBenchScenario equals = new TaskBenchScenario();
        new picocli.CommandLine(equals).parseArgs("--daemon-arg=--cpu-nice=0");
        assertEquals(0, equals.cpuNice());
        TaskBenchScenario split = new TaskBenchScenario();
        new picocli.CommandLine(split).parseArgs("--daemon-arg", "--cpu-nice", "--daemon-arg", "3");
        assertEquals(3, split.cpuNice());
        TaskBenchScenario bad = new TaskBenchScenario();
        new picocli.CommandLine(bad).parseArgs("--daemon-arg=--cpu-nice=low");
        picocli.CommandLine.ParameterException e = org.junit.jupiter.api.Assertions.assertThrows(
                picocli.CommandLine.ParameterException.class, bad::cpuNice);
        assertEquals("--daemon-arg --cpu-nice=low: \"low\" (expected: a nice value)", e.getMessage());
    }
}
