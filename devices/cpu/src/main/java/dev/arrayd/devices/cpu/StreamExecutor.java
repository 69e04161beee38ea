package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.support.LaunchGrid;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Runs commands for one stream, on that stream's worker thread only. */
final class StreamExecutor implements AutoCloseable {

    /**
     * Grids of at least this many work-items are split across the device's worker pool; smaller ones
     * run on the stream's own thread, where waking helpers (tens of µs each on a small VM) would cost
     * more than the work they take over.
     */
    static final long SPLIT_THRESHOLD = 16_384;

    /** Chunks per helper thread: a little over-decomposition evens out uneven chunks and busy cores. */
    static final int CHUNKS_PER_THREAD = 4;

    private final CpuDevice device;
    private final ArgBlock block;
    private final long[] dims = new long[6];
    private final long[] fullRange = new long[6];
    private final long[] chunkBounds;

    StreamExecutor(CpuDevice device) {
        this.device = device;
        int maxChunks = Math.max(1, device.threads() * CHUNKS_PER_THREAD);
        this.block = new ArgBlock(maxChunks);
        this.chunkBounds = new long[maxChunks * GridSplitter.CHUNK_LONGS];
    }

    void execute(DeviceCommand command) throws Throwable {
        switch (command) {
            case DeviceCommand.Launch launch -> launch(launch);
            case DeviceCommand.Upload upload -> {
                MemorySegment dst = device.segment(upload.dst(), "dst");
                checkSameSize(upload.src().byteSize(), "src", dst.byteSize(), "dst " + upload.dst());
                copy(upload.src(), dst);
            }
            case DeviceCommand.Download download -> {
                MemorySegment src = device.segment(download.src(), "src");
                checkSameSize(download.dst().byteSize(), "dst", src.byteSize(), "src " + download.src());
                copy(src, download.dst());
            }
            case DeviceCommand.RingTransfer ring -> {
                MemorySegment bytes = device.segment(ring.ref(), "ref");
                if (ring.intoRef()) {
                    ring.ring().drain(bytes);
                } else {
                    ring.ring().fill(bytes);
                }
            }
            case DeviceCommand.Copy copy -> {
                MemorySegment src = device.segment(copy.src(), "src");
                MemorySegment dst = device.segment(copy.dst(), "dst");
                checkSameSize(dst.byteSize(), "dst " + copy.dst(), src.byteSize(), "src " + copy.src());
                copy(src, dst);
            }
            case DeviceCommand.Fill fill -> fill(device.segment(fill.dst(), "dst"), fill);
            case DeviceCommand.PeerCopy peer -> peerCopy(peer);
            case DeviceCommand.Sequence sequence -> {
                for (int i = 0; i < sequence.parts().size(); i++) {
                    execute(sequence.part(i));
                }
            }
        }
    }

    /**
     * A memcpy from a sibling device's slab. The source range gets the same checks as this device's
     * own refs, by the device that owns it (so a refusal names that device and its pool).
     */
    private void peerCopy(DeviceCommand.PeerCopy peer) throws Throwable {
        if (!(peer.srcDevice() instanceof CpuDevice from) || !device.canCopyFrom(from)) {
            throw ArraydException.invalid("srcDevice: " + (peer.srcDevice() == null ? "null" : peer.srcDevice().id())
                    + " (expected: another cpu device opened by the same backend as " + device.id() + ")");
        }
        MemorySegment src = from.segment(peer.src(), "src");
        MemorySegment dst = device.segment(peer.dst(), "dst");
        checkSameSize(dst.byteSize(), "dst " + peer.dst(), src.byteSize(), "src " + peer.src() + " of " + from.id());
        copy(src, dst);
    }

    /**
     * Copies {@code src} over {@code dst} (same size); nothing to do when they are the same memory (host
     * memory used in place: an upload from, or a download into, the bytes a buffer already lives in). A large
     * copy is split across the device's threads ({@link ChunkedCopy}), as a large launch is.
     */
    private void copy(MemorySegment src, MemorySegment dst) throws Throwable {
        if (src.address() == dst.address()) {
            return;
        }
        WorkerPool pool = device.pool();
        long bytes = src.byteSize();
        boolean overlapping = src.address() < dst.address() + bytes && dst.address() < src.address() + bytes;
        if (pool != null && bytes >= ChunkedCopy.SPLIT_BYTES && !overlapping) {
            ChunkedCopy split = ChunkedCopy.of(src, dst, pool.size() + 1);
            if (split.chunks() > 1) {
                split.runAndWait(pool, Math.min(pool.size(), split.chunks() - 1));
                return;
            }
        }
        MemorySegment.copy(src, 0, dst, 0, bytes);
    }

    private static void checkSameSize(long bytes, String what, long expected, String of) {
        if (bytes != expected) {
            throw ArraydException.invalid(what + ": " + bytes + " bytes (expected: " + expected + ", the size of " + of + ")");
        }
    }

    private static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    static void fill(MemorySegment dst, DeviceCommand.Fill fill) {
        int width = fill.patternBytes();
        if (width != 1 && width != 2 && width != 4 && width != 8) {
            throw ArraydException.invalid("patternBytes: " + width + " (expected: 1, 2, 4 or 8)");
        }
        long bytes = dst.byteSize();
        if (bytes % width != 0) {
            throw ArraydException.invalid("dst: " + fill.dst() + " (expected: a multiple of the " + width + "-byte pattern)");
        }
        if (bytes == 0) {
            return;
        }
        long pattern = fill.pattern();
        switch (width) {
            case 1 -> {
                dst.fill((byte) pattern);
                return;
            }
            case 2 -> dst.set(LE_SHORT, 0, (short) pattern);
            case 4 -> dst.set(LE_INT, 0, (int) pattern);
            default -> dst.set(LE_LONG, 0, pattern);
        }
        // doubling copies: log2(bytes / width) bulk copies instead of one store per element
        for (long filled = width; filled < bytes; filled *= 2) {
            MemorySegment.copy(dst, 0, dst, filled, Math.min(filled, bytes - filled));
        }
    }

    private void launch(DeviceCommand.Launch launch) throws Throwable {
        Kernel kernel = launch.kernel();
        if (!(kernel instanceof CpuKernel cpuKernel)) {
            throw ArraydException.invalid("kernel: " + (kernel == null ? "null" : kernel.name() + " of backend "
                    + kernel.backend()) + " (expected: a kernel compiled by the cpu backend)");
        }
        long[] local = launch.localDims();
        long[] extents = null;
        if (cpuKernel.ir() != null) {
            extents = extents(cpuKernel, launch);
            if (launch.globalDims() == null) {
                throw ArraydException.invalid("globalDims: null (expected: 1 to 3 dims)");
            }
            local = cpuKernel.ir().checkLaunch(launch.globalDims(), local, launch.args(), extents);
        }
        long items = LaunchGrid.check(launch.globalDims(), local, device.gridLimits(), Long.MAX_VALUE, LaunchGrid.Names.SPI);
        LaunchGrid.normalize(launch.globalDims(), local, dims);
        block.fill(cpuKernel.signature(), launch.args(), device);
        if (extents != null) {
            block.setIrExtras(extents.length, extents);
        }
        if (!cpuKernel.module().acquire()) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION,
                    "kernel: " + cpuKernel.name() + " (expected: a kernel whose module is not closed)");
        }
        try {
            run(cpuKernel, items);
        } finally {
            cpuKernel.module().release();
        }
        if (extents != null && block.guardWord(0) != 0) {
            throw cpuKernel.ir().outOfRange((int) (block.guardWord(0) - 1), block.guardWord(1), extents);
        }
    }

    /** Element counts of the buffer arguments by parameter position (0 where the argument is not a buffer). */
    private static long[] extents(CpuKernel kernel, DeviceCommand.Launch launch) {
        var params = kernel.signature().params();
        long[] out = new long[params.size()];
        for (int i = 0; i < out.length && launch.args() != null && i < launch.args().size(); i++) {
            if (params.get(i).isBuffer() && launch.args().get(i) instanceof KernelArg.Buffer b && b.ref() != null) {
                out[i] = b.ref().bytes() / params.get(i).dtype().byteSize();
            }
        }
        return out;
    }

    private void run(CpuKernel cpuKernel, long items) throws Throwable {
        WorkerPool pool = device.pool();
        if (items >= SPLIT_THRESHOLD && pool != null) {
            int chunks = cpuKernel.phased()
                    ? GridSplitter.split(dims, localDims(), block.maxChunks(), chunkBounds)
                    : GridSplitter.split(dims, block.maxChunks(), chunkBounds);
            for (int c = 0; c < chunks; c++) {
                block.setRange(c, chunkBounds, c * GridSplitter.CHUNK_LONGS, dims);
            }
            if (chunks > 1) {
                new ChunkedLaunch(cpuKernel.trampoline(), block, chunks)
                        .runAndWait(pool, Math.min(pool.size(), chunks - 1));
                return;
            }
        } else {
            for (int d = 0; d < 3; d++) {
                fullRange[d] = 0;
                fullRange[3 + d] = dims[d];
            }
            block.setRange(0, fullRange, 0, dims);
        }
        MemorySegment range = block.range(0);
        cpuKernel.trampoline().invokeExact(range, block.args());
    }

    private long[] localDims() {
        return new long[] {dims[3], dims[4], dims[5]};
    }

    @Override
    public void close() {
        block.close();
    }
}
