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
     * The backend whose compiler builds this device's kernels: the id's backend for a device of this host; the
     * remote backend's name for a peer's device (whose id names the peer's own backend).
     */
    default String backend() {
        return id().backend();
    }

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

    /**
     * Whether this device's streams run {@link DeviceCommand.RingTransfer}s: its memory is host memory its stream
     * workers copy themselves. False (the default) makes the scheduler refuse such transfers on it.
     */
    default boolean streamsThroughRings() {
        return false;
    }

    /**
     * Nanoseconds per byte of moving data from host memory into this device, where the device knows it better
     * than the scheduler's assumption (a peer's device: measured over the network when the link opened); NaN
     * (the default) for the scheduler's own figure. Placement counts transfers with it.
     */
    default double hostTransferNanosPerByte() {
        return Double.NaN;
    }

    /**
     * Commands the scheduler should keep handed to this device beyond what its own streams run or queue, to cover
     * the time a command takes to reach the device and its completion to come back: 0 (the default) for a device
     * of this process; a peer's device, whose commands and completions cross a network, its peer's own depth, so
     * that the next command is already there when one ends. The scheduler's fair share decides among the commands
     * not yet handed over; what is handed over runs in the order it was.
     */
    default int commandsInTransit() {
        return 0;
    }

    /**
     * Nanoseconds per byte of a {@link DeviceCommand.PeerCopy} from {@code src} into this device, where the device
     * knows it better than the scheduler's assumption (from another peer's device: across the network); NaN (the
     * default) for the scheduler's own figure.
     */
    default double copyNanosPerByte(Device src) {
        return Double.NaN;
    }

    /**
     * Unified memory: makes {@code memory} (host memory the caller owns, aligned to the device's base
     * alignment) addressable by this device's commands and launches in place, as a pool of its own with a
     * negative id, without copying (the seed's {@code use_host_memory}). Not counted against the device's
     * capacity. The caller keeps the memory alive until {@link #unmapHost} and until every command using
     * it is done.
     *
     * @return the whole memory as a range, or null when the device cannot use host memory in place
     */
    default MemRef mapHost(java.lang.foreign.MemorySegment memory) {
        return null;
    }

    /** Forgets a range made by {@link #mapHost} (no command may still use it). Unknown ranges are ignored. */
    default void unmapHost(MemRef ref) {
    }

    /**
     * Whether the device can take commands now. Always true for a device of this host; a peer's device is
     * unreachable while the link to its daemon is down (its commands fail with UNAVAILABLE naming the peer).
     */
    default boolean isReachable() {
        return true;
    }

    /** Runs {@code onChange} after every change of {@link #isReachable()} (never, for a device of this host). */
    default void watchReachability(Runnable onChange) {
    }

    /** A new in-order stream on this device. */
    NativeStream newStream(String name);

    /** Releases streams and slabs. */
    @Override
    void close();
}
