package dev.arrayd.scheduler;

/**
 * Scheduler settings.
 *
 * @param allowNativeSource    accept native kernel dialects (C, OpenCL C, CUDA C, PTX); off by default
 *                             because a native kernel can do anything the daemon process can
 * @param memoryBudgetFraction part of each device's memory the slab pool may hold (default 0.9)
 * @param slabBytes            preferred slab size (default 64 MiB)
 * @param maxDims              most dimensions of a buffer (default 8)
 * @param maxGridItems         most work-items of one launch (default 2^40)
 * @param maxInlineBytes       largest Upload / Download carried inline in a command (default 16 MiB)
 * @param fastPathNanos        a ready command expected to take at most this long runs on the thread that
 *                             made it ready instead of being handed to the stream's worker (saving two
 *                             thread hand-offs); 0 turns the fast path off (default 20 µs)
 * @param dispatchDepth        most commands each device has been handed and not finished (running, or queued
 *                             in its native streams); the rest wait in the device's fair queue, where weights
 *                             and priorities decide who goes next. Small, so that device time is what is
 *                             shared; large enough to keep every native stream fed. 0 = automatic: the larger
 *                             of twice the device's suggested streams and its compute units (default 0)
 */
public record SchedulerConfig(boolean allowNativeSource, double memoryBudgetFraction, long slabBytes, int maxDims,
        long maxGridItems, long maxInlineBytes, long fastPathNanos, int dispatchDepth) {

    /** Automatic dispatch depth. */
    public SchedulerConfig(boolean allowNativeSource, double memoryBudgetFraction, long slabBytes, int maxDims,
            long maxGridItems, long maxInlineBytes, long fastPathNanos) {
        this(allowNativeSource, memoryBudgetFraction, slabBytes, maxDims, maxGridItems, maxInlineBytes, fastPathNanos, 0);
    }

    public static final long DEFAULT_FAST_PATH_NANOS = 20_000;

    /** Data commands (fill, copy, upload, download) of at most this many bytes count as short. */
    public static final long FAST_PATH_MAX_BYTES = 64 << 10;

    public static final double DEFAULT_MEMORY_BUDGET_FRACTION = 0.9;
    public static final long DEFAULT_SLAB_BYTES = 64L << 20;

    public SchedulerConfig {
        if (!(memoryBudgetFraction > 0 && memoryBudgetFraction <= 1)) {
            throw new IllegalArgumentException("memoryBudgetFraction: " + memoryBudgetFraction + " (expected: 0 < f <= 1)");
        }
        if (fastPathNanos < 0) {
            throw new IllegalArgumentException("fastPathNanos: " + fastPathNanos + " (expected: >= 0)");
        }
        if (dispatchDepth < 0) {
            throw new IllegalArgumentException("dispatchDepth: " + dispatchDepth + " (expected: >= 0, 0 = automatic)");
        }
        if (slabBytes <= 0) {
            throw new IllegalArgumentException("slabBytes: " + slabBytes + " (expected: > 0)");
        }
    }

    public static SchedulerConfig defaults() {
        return new SchedulerConfig(false, DEFAULT_MEMORY_BUDGET_FRACTION, DEFAULT_SLAB_BYTES, 8, 1L << 40, 16L << 20,
                DEFAULT_FAST_PATH_NANOS);
    }

    public SchedulerConfig withAllowNativeSource(boolean allow) {
        return new SchedulerConfig(allow, memoryBudgetFraction, slabBytes, maxDims, maxGridItems, maxInlineBytes, fastPathNanos,
                dispatchDepth);
    }

    public SchedulerConfig withFastPathNanos(long nanos) {
        return new SchedulerConfig(allowNativeSource, memoryBudgetFraction, slabBytes, maxDims, maxGridItems, maxInlineBytes, nanos,
                dispatchDepth);
    }

    public SchedulerConfig withDispatchDepth(int depth) {
        return new SchedulerConfig(allowNativeSource, memoryBudgetFraction, slabBytes, maxDims, maxGridItems, maxInlineBytes,
                fastPathNanos, depth);
    }
}
