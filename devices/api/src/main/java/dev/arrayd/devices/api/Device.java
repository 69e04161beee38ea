package dev.arrayd.devices.api;

/**
 * One compute device. Memory is managed as slabs (OCANNL's {@code alloc_pool} / {@code free_pool}):
 * the scheduler's slab pool asks for large slabs by pool id and sub-allocates buffers inside them,
 * addressing memory only as {@link MemRef}. Native pointers never leave the backend.
 */
public interface Device extends AutoCloseable {

    DeviceId id();

    DeviceInfo info();

    /**
     * Allocates the slab {@code poolId} of {@code bytes}, aligned to at least {@code alignment}.
     *
     * @throws ArraydException RESOURCE_EXHAUSTED when the device cannot provide it;
     *                         ALREADY_EXISTS when the pool id is taken
     */
    void allocPool(int poolId, long bytes, long alignment);

    /** Frees slab {@code poolId}. Unknown ids are ignored. */
    void freePool(int poolId);

    /** Zeroes a range synchronously (no stream command may be touching it). */
    void memsetZero(MemRef ref);

    /**
     * Whether this device's streams can run a {@link DeviceCommand.PeerCopy} from {@code src}
     * (another device of the same backend that shares or can reach its memory). When false, the
     * scheduler stages cross-device transfers through host memory.
     */
    default boolean canCopyFrom(Device src) {
        return false;
    }

    /** A new in-order stream on this device. */
    NativeStream newStream(String name);

    /** Releases streams and slabs. */
    @Override
    void close();
}
