package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import java.util.Objects;

/**
 * What every backend's {@link Device} does alike: its description and grid limits, its slabs
 * ({@link SlabLedger}: capacity, byte accounting, the bounds check of every {@link MemRef}), its streams
 * ({@link DeviceStreams}), and the order of close: refuse new work, drain and end every stream, then
 * release the device's own resources ({@link #release()}).
 *
 * @param <S> the backend's stream class
 * @param <B> the backend's slab class
 */
public abstract class AbstractDevice<S extends NativeStream, B extends PoolTable.Slab> implements Device {

    private final DeviceInfo info;
    private final LaunchGrid.Limits gridLimits;
    private final DeviceStreams<S> streams;
    private final SlabLedger<B> slabs;

    protected AbstractDevice(DeviceInfo info) {
        this.info = info;
        this.gridLimits = LaunchGrid.Limits.of(info);
        this.streams = new DeviceStreams<>(info.id());
        this.slabs = new SlabLedger<>(info.id().toString(), info.memoryBytes());
    }

    @Override
    public final DeviceId id() {
        return info.id();
    }

    @Override
    public final DeviceInfo info() {
        return info;
    }

    /** The grid limits launches are checked against ({@link LaunchGrid}). */
    public final LaunchGrid.Limits gridLimits() {
        return gridLimits;
    }

    // ---------------------------------------------------------------- memory

    @Override
    public final void allocPool(int poolId, long bytes, long alignment) {
        checkOpen();
        slabs.allocate(poolId, bytes, alignment, remaining -> allocateSlab(poolId, bytes, alignment, remaining));
    }

    /**
     * The native memory of a new slab (the ledger checked the id, the size and the capacity).
     *
     * @param remaining bytes left of the device's capacity, for messages
     * @throws dev.arrayd.devices.api.ArraydException RESOURCE_EXHAUSTED when the native allocation fails
     */
    protected abstract B allocateSlab(int poolId, long bytes, long alignment, long remaining);

    @Override
    public final void freePool(int poolId) {
        B slab = slabs.remove(poolId);
        if (slab != null) {
            freeSlab(slab);
        }
    }

    /** Pool ids of host memory mapped in place: negative, counting down, never reused. */
    private final java.util.concurrent.atomic.AtomicInteger nextHostPool = new java.util.concurrent.atomic.AtomicInteger(-1);

    @Override
    public final MemRef mapHost(java.lang.foreign.MemorySegment memory) {
        checkOpen();
        if (memory.byteSize() == 0 || memory.address() % info.baseAlignment() != 0) {
            throw dev.arrayd.devices.api.ArraydException.invalid("memory: " + memory.byteSize() + " bytes at an address " + memory.address()
                    % info.baseAlignment() + " bytes past a multiple of " + info.baseAlignment() + " (expected: > 0 bytes, "
                    + "aligned to the base alignment of " + info.id() + ")");
        }
        B slab = hostSlab(nextHostPool.getAndDecrement(), memory);
        if (slab == null) {
            return null;
        }
        slabs.adopt(slab);
        return new MemRef(slab.poolId(), 0, memory.byteSize());
    }

    /**
     * A slab over host memory the caller owns (freeing it must leave that memory alone), or null when this
     * backend's device cannot use host memory in place (the default).
     */
    protected B hostSlab(int poolId, java.lang.foreign.MemorySegment memory) {
        return null;
    }

    @Override
    public final void unmapHost(MemRef ref) {
        if (ref.poolId() < 0) {
            slabs.remove(ref.poolId());
        }
    }

    /** Frees a slab's native memory (commands already enqueued on it may still use it, where the driver allows). */
    protected abstract void freeSlab(B slab);

    /** The slab holding {@code ref}, bounds-checked; names the value {@code what[index]} when refused. */
    public final B slab(MemRef ref, String what, int index) {
        return slabs.slab(ref, what, index);
    }

    /** Whether slab {@code poolId} is allocated here. */
    public final boolean hasPool(int poolId) {
        return slabs.find(poolId) != null;
    }

    /** Bytes in slabs. */
    public final long usedBytes() {
        return slabs.usedBytes();
    }

    // ---------------------------------------------------------------- streams and close

    @Override
    public final NativeStream newStream(String name) {
        Objects.requireNonNull(name, "name");
        return streams.open(() -> makeStream(name));
    }

    /** A new stream of this device (registered by the caller). */
    protected abstract S makeStream(String name);

    /** A stream that closed itself is forgotten. */
    public final void forget(S stream) {
        streams.forget(stream);
    }

    /** FAILED_PRECONDITION naming the device once it is closed. */
    protected final void checkOpen() {
        streams.checkOpen();
    }

    public final boolean isClosed() {
        return streams.isClosed();
    }

    /** Refuses new work, drains and ends every stream, then {@link #release()}s; idempotent. */
    @Override
    public final void close() {
        beforeClose();
        if (streams.closeAll()) {
            release(slabs);
        }
    }

    /** Checks that may refuse a close, before anything is closed. */
    protected void beforeClose() {
    }

    /** After every stream ended: frees what the device holds, every slab of {@code slabs} included ({@link SlabLedger#removeAll()}). */
    protected abstract void release(SlabLedger<B> slabs);

    @Override
    public String toString() {
        return info.id().toString();
    }
}
