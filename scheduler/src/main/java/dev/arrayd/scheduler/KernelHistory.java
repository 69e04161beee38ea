package dev.arrayd.scheduler;

import java.util.Arrays;

/**
 * Execution-time history of one kernel on one device, for placement (StarPU's per-architecture
 * performance models). Keeps the last {@value #WINDOW} samples of nanoseconds per work-item, after
 * skipping the very first launch (it pays for cold caches and lazy loading); the estimate is their
 * median, so one slow outlier cannot move all work away from a device.
 */
final class KernelHistory {

    static final int WINDOW = 15;

    private final double[] perItem = new double[WINDOW];
    private final double[] sorted = new double[WINDOW];
    private long seen;
    private int count;
    private int next;
    private double median = Double.NaN; // of the samples kept; recomputed when one is added

    synchronized void record(long nanos, long items) {
        if (++seen == 1) {
            return;
        }
        perItem[next] = (double) nanos / Math.max(1, items);
        next = (next + 1) % WINDOW;
        count = Math.min(WINDOW, count + 1);
        System.arraycopy(perItem, 0, sorted, 0, count);
        Arrays.sort(sorted, 0, count);
        median = (count & 1) == 1 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
    }

    /** Samples kept (the skipped first launch not counted). */
    synchronized int samples() {
        return count;
    }

    /** Expected nanoseconds for {@code items} work-items; NaN while there is no sample yet. */
    synchronized double estimateNanos(long items) {
        return median * items; // NaN while there is no sample
    }
}
