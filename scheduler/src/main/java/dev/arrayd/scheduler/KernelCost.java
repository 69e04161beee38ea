package dev.arrayd.scheduler;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * What a kernel has cost per work-item lately: a maximum that decays by 1/8 with every sample, so
 * one slow run makes the kernel look expensive for a while and then is forgotten. The first
 * sample is skipped (it pays for loading and first-touch page faults), StarPU-style.
 *
 * <p>Read for every launch (is it short enough for the fast path?) and written by every completion,
 * on whichever threads those happen: lock-free, the maximum updated by compare-and-set.
 */
final class KernelCost {

    private static final double DECAY = 0.875;
    private static final long NONE = Double.doubleToRawLongBits(Double.NaN);
    private static final VarHandle MAX_BITS;

    static {
        try {
            MAX_BITS = MethodHandles.lookup().findVarHandle(KernelCost.class, "maxBits", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // whether the first sample came (and was skipped); two first samples at once may both be skipped
    private volatile boolean warm;
    // the decaying maximum of nanoseconds per work-item, as raw double bits; NaN while there is no sample
    private volatile long maxBits = NONE;

    void record(long nanos, long items) {
        if (!warm) {
            warm = true;
            return;
        }
        double perItem = (double) nanos / Math.max(1, items);
        long seen = maxBits;
        while (true) {
            double max = Double.longBitsToDouble(seen);
            double next = Double.isNaN(max) ? perItem : Math.max(perItem, max * DECAY);
            long witness = (long) MAX_BITS.compareAndExchange(this, seen, Double.doubleToRawLongBits(next));
            if (witness == seen) {
                return;
            }
            seen = witness;
        }
    }

    /** Expected nanoseconds for a launch of {@code items}; infinite while there is no history. */
    double estimateNanos(long items) {
        double max = Double.longBitsToDouble(maxBits);
        return Double.isNaN(max) ? Double.POSITIVE_INFINITY : max * items;
    }
}
