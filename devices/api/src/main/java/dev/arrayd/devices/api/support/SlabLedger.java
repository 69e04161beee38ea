package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.MemRef;
import java.util.List;

/**
 * The slab bookkeeping every backend's device does around its one native call: the checks of
 * {@code Device.allocPool} (positive size, power-of-two alignment, unused pool id, enough capacity
 * left), the pool table, and exact used bytes. The backend supplies only the native allocation
 * (and frees what {@link #remove} / {@link #removeAll} hand back).
 *
 * <p>Lookups ({@link #find}) are lock-free; allocation and removal are serialized, and the native
 * allocation runs inside that critical section so two requests cannot both take the last bytes.
 *
 * @param <S> the backend's slab type
 */
public final class SlabLedger<S extends PoolTable.Slab> implements LiveResources.Resource {

    /** Makes the native slab once the request has passed every check. May throw ArraydException. */
    @FunctionalInterface
    public interface Allocator<S> {
        S allocate(long remainingBytes);
    }

    private final String device;
    private final long capacityBytes;
    /** Read lock-free by every native access; replaced whole under this object's lock. */
    private volatile PoolTable<S> table = PoolTable.empty();
    @GuardedBy("this")
    private long usedBytes;

    /** @param device names the device in error messages, e.g. {@code cpu:0} */
    public SlabLedger(String device, long capacityBytes) {
        this.device = device;
        this.capacityBytes = capacityBytes;
        LiveResources.register(this);
    }

    /** Slabs still allocated: a device not closed, or a pool not freed. */
    @Override
    public synchronized java.util.Optional<String> leftover() {
        int slabs = table.size();
        return slabs == 0 ? java.util.Optional.empty()
                : java.util.Optional.of(device + ": " + usedBytes + " bytes in " + slabs + " slab(s) still allocated");
    }

    /**
     * Checks the request, then records the slab {@code allocator} makes.
     *
     * @throws ArraydException INVALID_ARGUMENT for a bad size or alignment, ALREADY_EXISTS for a pool id
     *                         in use, RESOURCE_EXHAUSTED when the capacity left is too small (or what the
     *                         allocator throws)
     */
    public void allocate(int poolId, long bytes, long alignment, Allocator<S> allocator) {
        if (bytes <= 0) {
            throw ArraydException.invalid("bytes: " + bytes + " (expected: > 0)");
        }
        if (alignment <= 0 || Long.bitCount(alignment) != 1) {
            throw ArraydException.invalid("alignment: " + alignment + " (expected: a power of two)");
        }
        synchronized (this) {
            if (table.find(poolId) != null) {
                throw new ArraydException(ErrorCode.ALREADY_EXISTS, "poolId: " + poolId + " (expected: a pool id not in use on "
                        + device + ")");
            }
            long remaining = capacityBytes - usedBytes;
            if (bytes > remaining) {
                throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, device + ": pool " + poolId + " of " + bytes
                        + " bytes (expected: at most the " + remaining + " bytes left of " + capacityBytes + ")");
            }
            S slab = allocator.allocate(remaining);
            if (slab.poolId() != poolId || slab.bytes() != bytes) {
                throw new IllegalStateException("allocator returned " + slab + " for pool " + poolId + " of " + bytes + " bytes");
            }
            table = table.with(slab);
            usedBytes += bytes;
        }
    }

    /**
     * Records a slab over memory the device does not own (host memory mapped in place): a negative pool id,
     * not counted against the capacity.
     */
    public synchronized void adopt(S slab) {
        if (slab.poolId() >= 0 || table.find(slab.poolId()) != null) {
            throw new IllegalStateException("adopt " + slab + " (expected: a new negative pool id)");
        }
        table = table.with(slab);
    }

    /**
     * The slab holding {@code ref}, bounds-checked, for every native access; lock-free. Names the value
     * {@code what[index]} ({@code what} alone when {@code index < 0}) when refused.
     *
     * @throws ArraydException INVALID_ARGUMENT for a null ref or a pool not allocated here, OUT_OF_RANGE
     *                         for a range past its slab's end
     */
    public S slab(MemRef ref, String what, int index) {
        if (ref == null) {
            throw ArraydException.invalid(name(what, index) + ": null (expected: a memory range of " + device + ")");
        }
        S slab = table.find(ref.poolId());
        if (slab == null) {
            throw ArraydException.invalid(name(what, index) + ": " + ref + " (expected: a range of a slab of " + device
                    + "; pool " + ref.poolId() + " is not allocated on it)");
        }
        if (ref.bytes() > slab.bytes() || ref.offset() > slab.bytes() - ref.bytes()) {
            throw new ArraydException(ErrorCode.OUT_OF_RANGE, name(what, index) + ": " + ref + " (expected: within pool "
                    + ref.poolId() + " of " + slab.bytes() + " bytes on " + device + ")");
        }
        return slab;
    }

    /** The field a refusal names (built only when refused: this check runs for every native access). */
    private static String name(String what, int index) {
        return index < 0 ? what : what + "[" + index + "]";
    }

    /** The slab of {@code poolId}, or null; lock-free. */
    public S find(int poolId) {
        return table.find(poolId);
    }

    /** Forgets the slab of {@code poolId} and returns it for the caller to free; null if unknown. */
    public synchronized S remove(int poolId) {
        S slab = table.find(poolId);
        if (slab != null) {
            table = table.without(poolId);
            if (poolId >= 0) {
                usedBytes -= slab.bytes();
            }
        }
        return slab;
    }

    /** Forgets every slab and returns them for the caller to free. */
    public synchronized List<S> removeAll() {
        List<S> all = table.slabs();
        table = PoolTable.empty();
        usedBytes = 0;
        return all;
    }

    public synchronized long usedBytes() {
        return usedBytes;
    }
}
