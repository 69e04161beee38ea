package dev.arrayd.benchmarks;

import java.util.List;
import java.util.Locale;

/**
 * One run of Task Bench: a graph at one iteration count, in one sweep; {@code peak} is the run's (one for all graphs).
 * Its efficiency and granularity follow Task Bench's definitions; {@link #taskBenchLines()} are its output lines.
 */
record TaskBenchRun(int sweep, String graph, long iterations, int timesteps, int width, long tasks, long dependencies,
        long flops, long nanos, int cores, double peak) {
    TaskBenchRun withPeak(double p) {
        return new TaskBenchRun(sweep, graph, iterations, timesteps, width, tasks, dependencies, flops, nanos, cores, p);
    }

    double flopsPerSecond() {
        return flops / (nanos / 1e9);
    }

    double granularityMicros() {
        return nanos / 1e3 * cores / tasks;
    }

    double efficiency() {
        return flopsPerSecond() / peak;
    }

    List<String> taskBenchLines() {
        return List.of(
                String.format(Locale.ROOT, "Graph %s, width %d, timesteps %d, kernel compute_bound, iterations %d, "
                        + "sweep %d", graph, width, timesteps, iterations, sweep + 1),
                "Total Tasks " + tasks,
                "Total Dependencies " + dependencies,
                "Total FLOPs " + flops,
                String.format(Locale.ROOT, "Elapsed Time %e seconds", nanos / 1e9),
                String.format(Locale.ROOT, "FLOP/s %e", flopsPerSecond()),
                String.format(Locale.ROOT, "Task Granularity %.3f us, Efficiency %.1f %%", granularityMicros(),
                        100 * efficiency()));
    }
}
