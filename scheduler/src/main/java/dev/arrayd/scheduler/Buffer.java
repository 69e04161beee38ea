package dev.arrayd.scheduler;

import dev.arrayd.devices.api.Quote;
import dev.arrayd.devices.api.support.GuardedBy;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.KernelArg;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A logical array: dtype, shape, memory mode, and its replicas — one slot per device and one for
 * the host, each {@link ReplicaState MODIFIED, SHARED or INVALID} with the event that last wrote it.
 * At least one replica is current at all times.
 */
public final class Buffer {

    private final long handle;
    private final DType dtype;
    private final Layout layout;
    private final long elements;
    /** A padded buffer's padding value (a scalar of its dtype; f32 for f16 / bf16), else null. */
    private final KernelArg.Scalar padValue;
    /** The buffer whose memory and replicas this one uses: itself, or for a view the buffer it views. */
    private final Buffer storage;
    private final DeviceRuntime home;
    private final MemoryMode mode;
    private final String label;

    /** Sessions holding a handle to it (its creator, and those that opened it by capability); freed at 0. */
    final AtomicInteger holders = new AtomicInteger(1);

    /**
     * One slot per device (by {@link DeviceRuntime#index()}), made on first use; its entries' state is guarded
     * likewise. Grown (replaced) when a device added later is first used ({@link #replica}); iterate a read of it.
     */
    @GuardedBy("SchedulerContext.submitLock")
    volatile Replica[] replicas;
    @GuardedBy("SchedulerContext.submitLock")
    final Replica host;
    @GuardedBy("SchedulerContext.submitLock")
    boolean destroyed;
    /**
     * A session other than its creator has held a handle to it or to a view of it (set for good, on the storage,
     * before that session can name it): its commands are never session-local ({@link SessionLocal}).
     */
    volatile boolean shared;
    /** HOSTED_CONSTANT: a command that reads it has been submitted; from then on it is read-only. */
    @GuardedBy("SchedulerContext.submitLock")
    boolean frozen;
    /** Internal (a stream's merge buffer, a per-stream instance): in no session's handle table. */
    final boolean internal;
    /** {@link Sharing#PER_STREAM}: a handle only, with no replicas of its own; its streams' instances hold the data. */
    final boolean perStream;
    /** A per-stream buffer's instances by stream (made on first use). */
    @GuardedBy("SchedulerContext.submitLock")
    java.util.IdentityHashMap<Stream, Buffer> instances;
    /** An instance: the per-stream buffer it belongs to, and the quota its bytes were charged to. */
    @GuardedBy("SchedulerContext.submitLock")
    Buffer parent;
    @GuardedBy("SchedulerContext.submitLock")
    MemoryCharge charge;
    /** The host memory it lives in (its host copy, used in place), or null: host copies of its own. */
    private final HostMemory hostMemory;
    /** The device replica that is {@link #hostMemory} itself (a unified-memory device's), or null. */
    @GuardedBy("SchedulerContext.submitLock")
    Replica twin;

    Buffer(long handle, DType dtype, long[] dims, long elements, DeviceRuntime home, int deviceCount, MemoryMode mode,
            String label, boolean internal) {
        this(handle, dtype, dims, elements, home, deviceCount, mode, label, internal, false);
    }

    Buffer(long handle, DType dtype, long[] dims, long elements, DeviceRuntime home, int deviceCount, MemoryMode mode,
            String label, boolean internal, boolean perStream) {
        this(handle, dtype, dims, elements, home, deviceCount, mode, label, internal, perStream, null);
    }

    Buffer(long handle, DType dtype, long[] dims, long elements, DeviceRuntime home, int deviceCount, MemoryMode mode,
            String label, boolean internal, boolean perStream, HostMemory hostMemory) {
        this(handle, dtype, Layout.dense(dims), null, null, home, deviceCount, mode, label, internal, perStream, hostMemory);
        assert elements == layout.elements();
    }

    /**
     * A buffer of {@code layout}; with {@code storage} non-null a view: a handle of its own over the memory,
     * replicas and hazards of {@code storage} (which owns them; this one has none).
     */
    Buffer(long handle, DType dtype, Layout layout, KernelArg.Scalar padValue, Buffer storage, DeviceRuntime home,
            int deviceCount, MemoryMode mode, String label, boolean internal, boolean perStream, HostMemory hostMemory) {
        this.hostMemory = hostMemory;
        this.handle = handle;
        this.dtype = dtype;
        this.layout = layout;
        this.padValue = padValue;
        this.storage = storage == null ? this : storage;
        this.elements = layout.storageElements();
        this.home = home;
        this.mode = mode;
        this.label = label;
        this.internal = internal;
        this.perStream = perStream;
        this.replicas = new Replica[storage == null ? deviceCount : 0];
        this.host = new Replica(this, null);
    }

    /** Whether every session holding it has destroyed its handle (its memory is gone or going). */
    public boolean isFreed() {
        return holders.get() == 0;
    }

    public long handle() {
        return handle;
    }

    public DType dtype() {
        return dtype;
    }

    /** Its dims: the interior's when it is padded. */
    public long[] dims() {
        return layout.dims();
    }

    /** Its dims and padding. */
    public Layout layout() {
        return layout;
    }

    /** Whether any axis is padded. */
    public boolean isPadded() {
        return layout.isPadded();
    }

    /** The padding value of a padded buffer (f32 for f16 / bf16 buffers), else null. */
    public KernelArg.Scalar padValue() {
        return padValue;
    }

    /** The padding value as a fill pattern of the dtype's width; 0 when unpadded (or padded with zeros). */
    long padPattern() {
        return padValue == null || !layout.isPadded() ? 0 : CommandValidator.fillPattern(dtype, padValue);
    }

    /** The buffer whose memory this one is: itself, or the buffer a view views. */
    public Buffer storage() {
        return storage;
    }

    /** Whether it is a view of another buffer's memory. */
    public boolean isView() {
        return storage != this;
    }

    /** Elements of its memory: the padded array (what kernels index and bounds checks allow). */
    public long elements() {
        return elements;
    }

    /** Size of its memory in bytes, padding included (a slab block may be larger, rounded to the alignment). */
    public long sizeBytes() {
        return elements * dtype.byteSize();
    }

    /** The device it was created on (where its first replica lives; commands default to its current replicas). */
    public DeviceRuntime device() {
        return home;
    }

    public MemoryMode memoryMode() {
        return mode;
    }

    public String label() {
        return label;
    }

    /** The host memory it lives in (a region's slice), or null when its host copies are its own. */
    public HostMemory hostMemory() {
        return hostMemory;
    }

    /** Whether {@code bytes} (a region's, say) share memory with the host memory this buffer lives in. */
    boolean livesIn(MemorySegment bytes) {
        if (hostMemory == null || !bytes.isNative()) {
            return false;
        }
        MemorySegment own = hostMemory.memory();
        return bytes.address() < own.address() + own.byteSize() && own.address() < bytes.address() + bytes.byteSize();
    }

    /** SHARED, or PER_STREAM (each stream its own instance). */
    public Sharing sharing() {
        return perStream ? Sharing.PER_STREAM : Sharing.SHARED;
    }

    /** The replica slot on {@code d} (created on first use). */
    @GuardedBy("SchedulerContext.submitLock")
    Replica replica(DeviceRuntime d) {
        int i = d.index();
        if (i >= replicas.length) { // a device added after this buffer was made
            replicas = java.util.Arrays.copyOf(replicas, i + 1);
        }
        Replica r = replicas[i];
        if (r == null) {
            r = replicas[i] = new Replica(this, d);
        }
        return r;
    }

    /** The replica slot on {@code d} if it was ever made, else null. */
    Replica replicaOrNull(DeviceRuntime d) {
        Replica[] reps = replicas;
        return d.index() < reps.length ? reps[d.index()] : null;
    }

    /** Number of current copies, host included. */
    int validCount() {
        int n = host.valid() ? 1 : 0;
        for (Replica r : replicas) {
            if (r != null && r.valid()) {
                n++;
            }
        }
        return n;
    }

    /**
     * The device a command on this buffer runs on when the client names none: the device using its host
     * memory in place when that is current, else the device of a current replica (the modified one
     * first), else where it was created.
     */
    DeviceRuntime preferredDevice() {
        if (storage != this) {
            return storage.preferredDevice();
        }
        if (twin != null && twin.valid()) {
            return twin.device; // the host memory it lives in is current: used in place there, nothing moves
        }
        DeviceRuntime shared = null;
        for (Replica r : replicas) {
            if (r != null && r.state == ReplicaState.MODIFIED) {
                return r.device;
            }
            if (r != null && shared == null && r.valid()) {
                shared = r.device;
            }
        }
        if (shared != null) {
            return shared;
        }
        return home;
    }

    @Override
    public String toString() {
        return "buffer " + Handles.format(handle) + (label.isEmpty() ? "" : " " + Quote.string(label)) + " "
                + dtype.wireName() + layout + " on " + home.id();
    }
}
