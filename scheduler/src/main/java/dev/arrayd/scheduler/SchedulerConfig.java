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
 *                             thread hand-offs); 0 turns the fast path off (default 20 µs). On a thread
 *                             that is completing a command (a device's completion thread, a stream worker
 *                             calling back), a ready launch expected to take up to
 *                             {@link #COMPLETION_FAST_PATH_FACTOR} times as long runs there too (see
 *                             {@link #completionFastPathNanos})
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

    /** How much longer a launch may be and still run on a thread completing a command than on another. */
    public static final int COMPLETION_FAST_PATH_FACTOR = 3;

    /**
     * A short launch made ready on a thread that has another short launch queued to run inline goes to its
     * lane's worker, to run beside that one, when it is expected to take at least this long (shorter ones
     * cost less run one after the other than a hand-off to another thread).
     */
    public static final long BESIDE_MIN_NANOS = 5_000;

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

    /**
     * The fast-path bound for a launch made ready by a command's completion, on the completing thread: a
     * device's completion thread or a stream worker, not a transport thread (where requests wait behind
     * whatever runs inline). The thread was busy with the device's work already, and the launch saves the
     * hand-off to a worker and the completion's hand-off back; for a command of a few tens of µs those are
     * about as long as the command itself.
     */
    public long completionFastPathNanos() {
        return fastPathNanos * COMPLETION_FAST_PATH_FACTOR;
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
