package dev.arrayd.devices.cpu;

import java.lang.foreign.MemorySegment;

/**
 * A large copy (an upload, a download, a copy between slabs) split into chunks that the device's threads
 * copy at once: one thread rarely reaches the memory bandwidth of several.
 */
final class ChunkedCopy extends ChunkedWork {

    /** Copies of at least this many bytes are split (smaller ones are done by the stream's worker alone). */
    static final long SPLIT_BYTES = 8L << 20;
    /** No chunk is smaller than this (each costs a claim and, for a helper, a wake-up). */
    static final long MIN_CHUNK_BYTES = 2L << 20;
    /** Chunks per thread: a thread that starts late still finds work. */
    private static final int CHUNKS_PER_THREAD = 4;

    private final MemorySegment src;
    private final MemorySegment dst;
    private final long chunkBytes;

    private ChunkedCopy(MemorySegment src, MemorySegment dst, long chunkBytes, int chunks) {
        super(chunks);
        this.src = src;
        this.dst = dst;
        this.chunkBytes = chunkBytes;
    }

    /** A copy of {@code src} over {@code dst} (same size, not overlapping) for {@code threads} threads. */
    static ChunkedCopy of(MemorySegment src, MemorySegment dst, int threads) {
        long bytes = src.byteSize();
        long chunk = Math.max(MIN_CHUNK_BYTES, ceilDiv(bytes, (long) threads * CHUNKS_PER_THREAD));
        return new ChunkedCopy(src, dst, chunk, (int) ceilDiv(bytes, chunk));
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }

    int chunks() {
        return (int) ceilDiv(src.byteSize(), chunkBytes);
    }

    @Override
    void chunk(int index) {
        long offset = index * chunkBytes;
        MemorySegment.copy(src, offset, dst, offset, Math.min(chunkBytes, src.byteSize() - offset));
    }
}
