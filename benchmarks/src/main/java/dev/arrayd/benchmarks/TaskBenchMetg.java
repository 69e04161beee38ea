package dev.arrayd.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A graph's METG(50%) over the sweeps of a run, by Task Bench's definition (the smallest task granularity of a
 * run with at least 50% efficiency): the median and range of the sweeps that reached it, and the median of each
 * sweep's best efficiency.
 */
record TaskBenchMetg(double medianMicros, double minMicros, double maxMicros, int reached, double bestEfficiency) {

    String median() {
        return Double.isNaN(medianMicros) ? "not reached" : String.format(Locale.ROOT, "%.1f", medianMicros);
    }

    /** The run of smallest granularity with at least 50% efficiency, or null. */
    static TaskBenchRun best(List<TaskBenchRun> runs, String graph) {
        TaskBenchRun best = null;
        for (TaskBenchRun r : runs) {
            if (r.graph().equals(graph) && r.efficiency() >= 0.5
                    && (best == null || r.granularityMicros() < best.granularityMicros())) {
                best = r;
            }
        }
        return best;
    }

    /**
     * The median over sweeps of each sweep's METG (a sweep that never reached 50% counts as infinite, so the
     * median is "not reached" when most did not); the best efficiency is the median of each sweep's best.
     */
    static TaskBenchMetg overSweeps(List<TaskBenchRun> runs, String graph, int sweeps) {
        double[] perSweep = new double[sweeps];
        double[] best = new double[sweeps];
        List<Double> reached = new ArrayList<>();
        for (int s = 0; s < sweeps; s++) {
            int sweep = s;
            List<TaskBenchRun> of = runs.stream().filter(r -> r.sweep() == sweep).toList();
            TaskBenchRun m = best(of, graph);
            perSweep[s] = m == null ? Double.POSITIVE_INFINITY : m.granularityMicros();
            if (m != null) {
                reached.add(m.granularityMicros());
            }
            best[s] = of.stream().filter(r -> r.graph().equals(graph)).mapToDouble(TaskBenchRun::efficiency).max().orElse(0);
        }
        double med = ThroughputScenario.median(perSweep);
        return new TaskBenchMetg(Double.isInfinite(med) ? Double.NaN : med,
                reached.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN),
                reached.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN), reached.size(),
                ThroughputScenario.median(best));
    }
}
