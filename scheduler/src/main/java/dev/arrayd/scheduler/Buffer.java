package dev.arrayd.scheduler;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.MemRef;
import java.util.Arrays;

/**
 * A logical array: dtype, shape and where it lives. Also carries its hazard state: the event
 * that last wrote it and the events reading it since (guarded by the scheduler's submit lock).
 */
public final class Buffer {

    private final long handle;
    private final DType dtype;
    private final long[] dims;
    private final long elements;
    private final DeviceRuntime device;
    private final MemRef mem;
    private final String label;

    /** Sessions holding a handle to it (its creator, and those that opened it by capability); freed at 0. */
    final java.util.concurrent.atomic.AtomicInteger holders = new java.util.concurrent.atomic.AtomicInteger(1);

    // hazard state, guarded by Scheduler.submitLock
    Event lastWriter;
    Event[] readers = new Event[2];
    int readerCount;
    boolean destroyed;

    Buffer(long handle, DType dtype, long[] dims, long elements, DeviceRuntime device, MemRef mem, String label) {
        this.handle = handle;
        this.dtype = dtype;
        this.dims = dims.clone();
        this.elements = elements;
        this.device = device;
        this.mem = mem;
        this.label = label;
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

    public long[] dims() {
        return dims.clone();
    }

    public long elements() {
        return elements;
    }

    /** Size of the data in bytes (the slab block may be larger, rounded to the alignment). */
    public long sizeBytes() {
        return elements * dtype.byteSize();
    }

    public DeviceRuntime device() {
        return device;
    }

    public String label() {
        return label;
    }

    MemRef mem() {
        return mem;
    }

    /** The data range of this buffer (without alignment padding). */
    MemRef data(long offset, long bytes) {
        return new MemRef(mem.poolId(), mem.offset() + offset, bytes);
    }

    @Override
    public String toString() {
        return "buffer " + Handles.format(handle) + (label.isEmpty() ? "" : " \"" + label + "\"") + " "
                + dtype.wireName() + Arrays.toString(dims) + " on " + device.id();
    }
}
