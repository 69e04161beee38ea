package dev.arrayd.client;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

/**
 * A shared-memory region of a session, mapped into this process ({@link Session#createRegion}): memory the
 * daemon reads uploads from and writes downloads into directly, without copies through gRPC. Fill it
 * through {@link #segment()} (or a {@link ByteBuffer} / {@link FloatBuffer} view), then upload from it;
 * read a download's bytes from it once the download's event has completed. The daemon reads and writes it
 * when a command runs: do not change bytes an upload not yet completed reads. Closing it unmaps it here and
 * destroys it in the session.
 */
public final class MappedRegion implements AutoCloseable {

    private final long handle;
    private final long size;
    private final Arena arena;
    private final MemorySegment segment;
    private final Runnable destroy;

    MappedRegion(long handle, long size, Arena arena, MemorySegment segment, Runnable destroy) {
        this.handle = handle;
        this.size = size;
        this.arena = arena;
        this.segment = segment;
        this.destroy = destroy;
    }

    /** The region's handle in its session. */
    public long id() {
        return handle;
    }

    public long size() {
        return size;
    }

    /** The mapping, {@link #size()} bytes, readable and writable. */
    public MemorySegment segment() {
        return segment;
    }

    /** The mapping as a little-endian byte buffer (regions up to 2 GiB). */
    public ByteBuffer asByteBuffer() {
        return segment.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The mapping as floats, little-endian, as a buffer of DType.F32 holds them. */
    public FloatBuffer asFloatBuffer() {
        return asByteBuffer().asFloatBuffer();
    }

    /** Copies {@code values} into the region from byte {@code offsetBytes}. */
    public void put(long offsetBytes, float[] values) {
        MemorySegment.copy(values, 0, segment, ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN),
                offsetBytes, values.length);
    }

    /** Copies {@code values.length} floats out of the region from byte {@code offsetBytes}. */
    public void get(long offsetBytes, float[] values) {
        MemorySegment.copy(segment, ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), offsetBytes,
                values, 0, values.length);
    }

    /** Unmaps it here only (its session is closing, which frees it in the daemon). */
    void unmap() {
        arena.close();
    }

    /** Unmaps it here and destroys it in the session (the daemon frees it once commands using it are done). */
    @Override
    public void close() {
        arena.close();
        destroy.run();
    }

    @Override
    public String toString() {
        return "region 0x" + Long.toHexString(handle) + " (" + size + " bytes)";
    }
}
