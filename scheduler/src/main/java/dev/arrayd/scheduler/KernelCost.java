package dev.arrayd.scheduler;

/**
 * What a kernel has cost per work-item lately: a maximum that decays by 1/8 with every sample, so
 * one slow run makes the kernel look expensive for a while and then is forgotten. The first
 * sample is skipped (it pays for loading and first-touch page faults), StarPU-style.
 */
final class KernelCost {

    private static final double DECAY = 0.875;

    private long samples;
    private double maxNanosPerItem = Double.NaN;

    synchronized void record(long nanos, long items) {
        if (++samples == 1) {
            return;
        }
        double perItem = (double) nanos / Math.max(1, items);
        maxNanosPerItem = Double.isNaN(maxNanosPerItem) ? perItem : Math.max(perItem, maxNanosPerItem * DECAY);
    }

    /** Expected nanoseconds for a launch of {@code items}; infinite while there is no history. */
    synchronized double estimateNanos(long items) {
        return Double.isNaN(maxNanosPerItem) ? Double.POSITIVE_INFINITY : maxNanosPerItem * items;
    }
}
