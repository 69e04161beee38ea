package dev.arrayd.scheduler;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * What a kernel has cost per work-item lately: a maximum that decays by 1/8 with every sample, so
 * two slow runs in a row make the kernel look expensive for a while and then are forgotten. Each
 * sample counts as the smaller of itself and the sample before it: one slow run alone is not the
 * kernel's cost but its thread's (a stream worker, at the kernels' lowered priority, preempted on a
 * host with no idle core), and counting it would take a short kernel off the fast path for the next
 * couple of dozen launches, where its runs on the workers, preempted in turn, can keep it off. The
 * first sample is skipped (it pays for loading and first-touch page faults), StarPU-style.
 *
 * <p>Read for every launch (is it short enough for the fast path?) and written by every completion,
 * on whichever threads those happen: lock-free, the maximum updated by compare-and-set.
 */
final class KernelCost {

    private static final double DECAY = 0.875;
    private static final long NONE = Double.doubleToRawLongBits(Double.NaN);
    private static final VarHandle MAX_BITS;
    private static final VarHandle LAST_BITS;

    static {
        try {
            MAX_BITS = MethodHandles.lookup().findVarHandle(KernelCost.class, "maxBits", long.class);
            LAST_BITS = MethodHandles.lookup().findVarHandle(KernelCost.class, "lastBits", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // whether the first sample came (and was skipped); two first samples at once may both be skipped
    private volatile boolean warm;
    // the decaying maximum of nanoseconds per work-item, as raw double bits; NaN while there is no sample
    private volatile long maxBits = NONE;
    // the last sample's nanoseconds per work-item, as raw double bits; NaN before the first counted one
    // (accessed opaquely through LAST_BITS)
    private long lastBits = NONE;

    void record(long nanos, long items) {
        if (!warm) {
            warm = true;
            return;
        }
        double sample = (double) nanos / Math.max(1, items);
        // opaque, not an atomic swap (a locked instruction per completion): two threads recording at once may pair
        // with the same sample before, which only makes the pairing looser
        double before = Double.longBitsToDouble((long) LAST_BITS.getOpaque(this));
        LAST_BITS.setOpaque(this, Double.doubleToRawLongBits(sample));
        double perItem = Double.isNaN(before) ? sample : Math.min(sample, before);
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
