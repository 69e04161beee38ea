package dev.arrayd.scheduler;

/**
 * Execution-time history of one kernel on one device, for placement (StarPU's per-architecture
 * performance models). Keeps the last {@value #WINDOW} samples of nanoseconds per work-item, after
 * skipping the very first launch (it pays for cold caches and lazy loading); the estimate is their
 * median, so one slow outlier cannot move all work away from a device.
 */
final class KernelHistory {

    static final int WINDOW = 15;

    private final double[] perItem = new double[WINDOW]; // the samples kept, oldest overwritten first
    private final double[] sorted = new double[WINDOW];  // the same samples in ascending order
    private long seen;
    private int count;
    private int next;
    private double median = Double.NaN; // of the samples kept; updated when one is added

    synchronized void record(long nanos, long items) {
        if (++seen == 1) {
            return;
        }
        double v = (double) nanos / Math.max(1, items);
        if (count == WINDOW) {
            // the oldest sample leaves the sorted window: shift the ones above it down over it
            int at = indexOf(perItem[next]);
            System.arraycopy(sorted, at + 1, sorted, at, count - at - 1);
            count--;
        }
        perItem[next] = v;
        next = (next + 1) % WINDOW;
        int at = count;
        while (at > 0 && sorted[at - 1] > v) { // insertion: at most WINDOW moves, no sort per sample
            sorted[at] = sorted[at - 1];
            at--;
        }
        sorted[at] = v;
        count++;
        median = (count & 1) == 1 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
    }

    /** Where {@code v} (a sample kept) is in the sorted window. */
    private int indexOf(double v) {
        for (int i = 0; i < count; i++) {
            if (Double.compare(sorted[i], v) == 0) {
                return i;
            }
        }
        throw new IllegalStateException("sample " + v + " not in the window");
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
