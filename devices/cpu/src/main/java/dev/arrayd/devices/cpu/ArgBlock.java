package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.support.LaunchArguments;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * A stream's native argument memory, allocated once so that a launch allocates nothing native:
 *
 * <pre>
 *  ranges : [chunk 0: lo[3] hi[3] gsize[3] lsize[3]] [chunk 1] ...   (12 × int64 each)
 *  args   : [void* 0] [void* 1] ...      buffer: slab base + offset; scalar: &amp;slots[i]
 *  slots  : [8 bytes 0] [8 bytes 1] ...  scalar values, stored at their C width, little-endian
 *  ext    : [int64 0] [int64 1] ...      IR kernels: element count of each buffer argument (args[n])
 *  guard  : [int64 hit] [int64 index]    IR kernels: the guard record (args[n + 1]), zeroed per launch
 * </pre>
 *
 * Only the stream's worker thread writes it; helper threads of a split launch read it while the
 * worker waits for them.
 */
final class ArgBlock implements AutoCloseable, LaunchArguments.Sink {

    private static final int INITIAL_ARGS = 32;
    private static final long RANGE_BYTES = CSourceAssembler.RANGE_LONGS * Long.BYTES;

    private final Arena arena = Arena.ofShared();
    private final MemorySegment[] rangeSlots;
    private MemorySegment args;
    private MemorySegment slots;
    private MemorySegment ext;
    private final MemorySegment guard;
    private int capacity;
    /** The device whose memory buffer arguments name, while {@link #fill} runs. */
    private CpuDevice device;

    ArgBlock(int maxChunks) {
        MemorySegment ranges = arena.allocate(RANGE_BYTES * maxChunks, 64);
        rangeSlots = new MemorySegment[maxChunks];
        for (int i = 0; i < maxChunks; i++) {
            rangeSlots[i] = ranges.asSlice(i * RANGE_BYTES, RANGE_BYTES);
        }
        guard = arena.allocate(2 * Long.BYTES, 64);
        grow(INITIAL_ARGS);
    }

    /**
     * For an IR kernel, after {@link #fill}: writes the extents, zeroes the guard record and points
     * the two arguments after the declared ones at them.
     */
    void setIrExtras(int params, long[] extents) {
        for (int i = 0; i < params; i++) {
            ext.setAtIndex(ValueLayout.JAVA_LONG, i, extents[i]);
        }
        guard.setAtIndex(ValueLayout.JAVA_LONG, 0, 0);
        guard.setAtIndex(ValueLayout.JAVA_LONG, 1, 0);
        args.setAtIndex(ValueLayout.JAVA_LONG, params, ext.address());
        args.setAtIndex(ValueLayout.JAVA_LONG, params + 1, guard.address());
    }

    /** Word 0: 0, or the id + 1 of the first guard that caught an index; word 1: that index. */
    long guardWord(int i) {
        return guard.getAtIndex(ValueLayout.JAVA_LONG, i);
    }

    MemorySegment args() {
        return args;
    }

    MemorySegment range(int chunk) {
        return rangeSlots[chunk];
    }

    int maxChunks() {
        return rangeSlots.length;
    }

    /** Writes chunk {@code chunk}'s range: lo / hi from {@code bounds} at {@code at}, sizes from {@code dims}. */
    void setRange(int chunk, long[] bounds, int at, long[] dims) {
        MemorySegment r = rangeSlots[chunk];
        for (int i = 0; i < 6; i++) {
            r.setAtIndex(ValueLayout.JAVA_LONG, i, bounds[at + i]);
        }
        for (int i = 0; i < 6; i++) {
            r.setAtIndex(ValueLayout.JAVA_LONG, 6 + i, dims[i]);
        }
    }

    /** Checks {@code values} against {@code signature} and writes them; nothing is written past a bad one. */
    void fill(KernelSignature signature, List<KernelArg> values, CpuDevice device) {
        // two spare slots for an IR kernel's extents and guard record
        int params = signature.params().size();
        if (params + 2 > capacity) {
            grow(Math.max(params + 2, capacity * 2));
        }
        this.device = device;
        try {
            LaunchArguments.pack(signature, values, this);
        } finally {
            this.device = null;
        }
    }

    @Override
    public void buffer(int index, KernelParam param, MemRef ref) {
        args.setAtIndex(ValueLayout.JAVA_LONG, index, device.address(ref, "args", index));
    }

    @Override
    public void scalar(int index, KernelParam param, long bits, int width) {
        long offset = (long) index * Long.BYTES;
        switch (width) {
            case 8 -> slots.set(ValueLayout.JAVA_LONG, offset, bits);
            case 4 -> slots.set(ValueLayout.JAVA_INT, offset, (int) bits);
            case 2 -> slots.set(ValueLayout.JAVA_SHORT, offset, (short) bits);
            default -> slots.set(ValueLayout.JAVA_BYTE, offset, (byte) bits);
        }
        args.setAtIndex(ValueLayout.JAVA_LONG, index, slots.address() + offset);
    }

    private void grow(int newCapacity) {
        // rare (kernels with very many parameters): the old blocks stay in the arena until close
        args = arena.allocate((long) newCapacity * Long.BYTES, 64);
        slots = arena.allocate((long) newCapacity * Long.BYTES, 64);
        ext = arena.allocate((long) newCapacity * Long.BYTES, 64);
        capacity = newCapacity;
    }

    @Override
    public void close() {
        arena.close();
    }
}
