package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.support.AbstractDevice;
import dev.arrayd.devices.api.support.SlabLedger;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.MemRef;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A share of the host's cores and memory. Slabs are off-heap segments, each in its own shared
 * arena; the sum of slab sizes never exceeds {@link DeviceInfo#memoryBytes()}.
 *
 * <p>Devices opened by one {@link CpuBackend} all live in this process's memory, so each can copy
 * straight from another's slabs ({@link #canCopyFrom}); devices of another backend instance cannot
 * (their slabs belong to a different owner, who may free them on its own schedule).
 */
final class CpuDevice extends AbstractDevice<CpuStream, Slab> {

    private final Object owner; // the backend that opened this device; peers share it
    private final int threads;
    private final int computeNice;
    private final CompletionThread completions; // null when kernels are not lowered: the workers call back themselves
    // Launches running at once on this device, across all its streams: at most one per thread, so a
    // device of N threads computes like N cores however many streams feed it (data commands are not held).
    private final java.util.concurrent.Semaphore computeSlots;
    private final WorkerPool pool; // null when the device has a single thread: nothing to help with
    private final java.util.concurrent.ConcurrentLinkedQueue<StreamExecutor> inlineExecutors =
            new java.util.concurrent.ConcurrentLinkedQueue<>();

    /**
     * @param computeNice raised nice value of the threads that run kernels (see {@link ComputeThreadPriority}).
     *                    When positive (and nice values can be changed here) the device's {@link CompletionThread}
     *                    starts here, at the priority of the calling thread
     */
    CpuDevice(DeviceInfo info, int threads, Object owner, int computeNice) {
        super(info);
        this.computeNice = computeNice;
        this.owner = Objects.requireNonNull(owner, "owner");
        this.threads = threads;
        this.computeSlots = new java.util.concurrent.Semaphore(threads);
        // the stream's own thread works along, so threads - 1 helpers keep `threads` cores busy
        this.pool = threads > 1 ? new WorkerPool(id().ordinal(), threads - 1, computeNice) : null;
        this.completions = computeNice > 0 && ComputeThreadPriority.supported()
                ? new CompletionThread("arrayd-cpu" + id().ordinal() + "-completions") : null;
    }

    /** Permits for running launches (one per thread of the device). */
    java.util.concurrent.Semaphore computeSlots() {
        return computeSlots;
    }

    /** The backend that opened this device: its siblings share it (copies and markers between them work). */
    Object owner() {
        return owner;
    }

    /** Added to the nice value of the threads that run this device's kernels (0: unchanged). */
    int computeNice() {
        return computeNice;
    }

    /** Where the stream workers hand their completions; null when they call back themselves (kernels not lowered). */
    CompletionThread completions() {
        return completions;
    }

    int threads() {
        return threads;
    }

    WorkerPool pool() {
        return pool;
    }

    /** Off-heap memory in an arena of its own. */
    @Override
    protected Slab allocateSlab(int poolId, long bytes, long alignment, long remaining) {
        Arena arena = Arena.ofShared();
        try {
            return new Slab(poolId, arena, arena.allocate(bytes, Math.max(alignment, info().baseAlignment())));
        } catch (OutOfMemoryError e) {
            arena.close();
            throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, id() + ": pool " + poolId + " of " + bytes
                    + " bytes (expected: at most the " + remaining + " bytes left of " + info().memoryBytes()
                    + "); the allocation failed: " + e.getMessage(), e);
        }
    }

    /** Host memory used in place (unified memory): launches and copies address it like a slab. */
    @Override
    protected Slab hostSlab(int poolId, MemorySegment memory) {
        return new Slab(poolId, null, memory);
    }

    @Override
    protected void freeSlab(Slab slab) {
        slab.free();
    }

    @Override
    public void memsetZero(MemRef ref) {
        segment(ref, "ref").fill((byte) 0);
    }

    /** The bytes of {@code ref}, bounds-checked against its slab. */
    MemorySegment segment(MemRef ref, String what) {
        Slab slab = slab(ref, what, -1);
        return slab.segment().asSlice(ref.offset(), ref.bytes());
    }

    /** The native address of {@code ref}, bounds-checked; names it {@code what[index]} when refused. */
    long address(MemRef ref, String what, int index) {
        return slab(ref, what, index).baseAddress() + ref.offset();
    }

    /** True for another device opened by the same backend: its slabs are this process's memory too. */
    @Override
    public boolean canCopyFrom(Device src) {
        return src instanceof CpuDevice other && other != this && other.owner == owner;
    }

    /** True: a stream's worker copies between its slabs and a client's ring itself. */
    @Override
    public boolean streamsThroughRings() {
        return true;
    }

    @Override
    protected CpuStream makeStream(String name) {
        return new CpuStream(this, name);
    }

    /** An executor for an inline run; each has its own argument block, so runs may overlap. */
    StreamExecutor borrowInlineExecutor() {
        StreamExecutor e = inlineExecutors.poll();
        return e != null ? e : new StreamExecutor(this);
    }

    void returnInlineExecutor(StreamExecutor e) {
        inlineExecutors.offer(e);
        if (isClosed() && inlineExecutors.remove(e)) {
            e.close();
        }
    }

    /**
     * Not from one of the device's completion callbacks: the streams' workers wait for the callbacks queued
     * behind it, so the slabs could not be freed safely.
     */
    @Override
    protected void beforeClose() {
        if (completions != null && completions.isCurrent()) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, "close of " + id()
                    + " from one of its completion callbacks (expected: another thread; callbacks must be fast)");
        }
    }

    /** After the streams: the worker pool, the completion thread, then every slab. */
    @Override
    protected void release(SlabLedger<Slab> slabs) {
        StreamExecutor idle;
        while ((idle = inlineExecutors.poll()) != null) {
            idle.close();
        }
        if (pool != null) {
            pool.close();
        }
        if (completions != null) {
            completions.close(); // after the streams: each waited for its last completion
        }
        for (Slab slab : slabs.removeAll()) {
            slab.free();
        }
    }
}
