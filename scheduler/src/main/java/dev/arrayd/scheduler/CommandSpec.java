package dev.arrayd.scheduler;

import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.SlotRing;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import java.util.function.IntFunction;

/**
 * A command as a client describes it, with handles not yet resolved. The scheduler validates it
 * against the caller's session before anything runs.
 *
 * @param event         the event id it signals (0 = assign one)
 * @param waits         events that must complete first
 * @param stream        stream handle; 0 = the session's default stream on the command's device
 * @param deadlineNanos when the command must have started, on the scheduler's clock (the server's runs on
 *                      {@link System#nanoTime()}); {@link #NO_DEADLINE} for none. Past it, a command that
 *                      has not been handed to its device fails with DEADLINE_EXCEEDED instead of running
 * @param priority      its priority class; null = the session's
 */
public record CommandSpec(long event, long[] waits, long stream, Op op, long deadlineNanos, Priority priority) {

    /** No waits (shared: an empty array cannot change). */
    private static final long[] NO_WAITS = new long[0];

    /** No deadline. */
    public static final long NO_DEADLINE = Long.MAX_VALUE;

    public CommandSpec {
        Objects.requireNonNull(op, "op");
        waits = waits == null ? NO_WAITS : waits;
    }

    /** A command with no deadline, in its session's priority class. */
    public CommandSpec(long event, long[] waits, long stream, Op op) {
        this(event, waits, stream, op, NO_DEADLINE, null);
    }

    /**
     * A wire deadline (nanoseconds since the Unix epoch; 0 = none) on {@link System#nanoTime()}'s clock, the
     * clock of the server's scheduler. A deadline already past stays past: the command fails at once.
     */
    public static long deadlineFromUnixNanos(long unixNanos) {
        if (unixNanos <= 0) {
            return NO_DEADLINE;
        }
        java.time.Instant now = java.time.Instant.now();
        long nowUnix = now.getEpochSecond() * 1_000_000_000L + now.getNano();
        long left = unixNanos - nowUnix;
        long t = System.nanoTime();
        return left >= NO_DEADLINE - t ? NO_DEADLINE - 1 : t + left;
    }

    /** What the command does. */
    public sealed interface Op {}

    /** @param device device id; empty = the device of the first buffer argument, else the stream's */
    public record LaunchOp(long kernel, long[] globalDims, long[] localDims, List<Arg> args, String device) implements Op {}

    /**
     * Copies bytes of {@code src} into {@code dst}, on any devices (transfers are inserted as needed).
     * With {@code dst} 0 it is an explicit transfer instead: with {@code merge} NONE it makes {@code src}
     * current on {@code device} (a prefetch); with COPY or STREAMING it fills the merge buffer of the
     * command's stream (on {@code device}, or the stream's device) from {@code src}.
     *
     * @param device    target device id for a transfer; empty = the stream's device, else the buffer's
     * @param srcStream for a {@link Sharing#PER_STREAM} source: the stream whose instance is read (0 = the
     *                  command's own stream)
     */
    public record CopyOp(long src, long dst, long srcOffsetBytes, long dstOffsetBytes, long sizeBytes, String device,
                         MergeMode merge, long srcStream, boolean wholePadded) implements Op {

        /** Offsets into the interiors of padded buffers. */
        public CopyOp(long src, long dst, long srcOffsetBytes, long dstOffsetBytes, long sizeBytes, String device,
                      MergeMode merge, long srcStream) {
            this(src, dst, srcOffsetBytes, dstOffsetBytes, sizeBytes, device, merge, srcStream, false);
        }

        /** Reading the instance of the command's own stream when {@code src} is PER_STREAM. */
        public CopyOp(long src, long dst, long srcOffsetBytes, long dstOffsetBytes, long sizeBytes, String device,
                      MergeMode merge) {
            this(src, dst, srcOffsetBytes, dstOffsetBytes, sizeBytes, device, merge, 0);
        }

        public CopyOp {
            device = device == null ? "" : device;
            merge = merge == null ? MergeMode.NONE : merge;
        }

        /** A plain buffer-to-buffer copy. */
        public CopyOp(long src, long dst, long srcOffsetBytes, long dstOffsetBytes, long sizeBytes) {
            this(src, dst, srcOffsetBytes, dstOffsetBytes, sizeBytes, "", MergeMode.NONE);
        }
    }

    /**
     * @param value       a scalar of the buffer's dtype (an f32 for f16 / bf16 buffers)
     * @param wholePadded elements of a padded buffer's whole padded array; false = of its interior
     */
    public record FillOp(long buffer, KernelArg.Scalar value, long offsetElements, long countElements, boolean wholePadded)
            implements Op {

        public FillOp(long buffer, KernelArg.Scalar value, long offsetElements, long countElements) {
            this(buffer, value, offsetElements, countElements, false);
        }
    }

    /**
     * {@code data} must stay valid until the command's event completes.
     *
     * @param wholePadded {@code offsetBytes} into a padded buffer's whole padded array; false = into its interior
     *                    (row-major over its dims)
     */
    public record UploadOp(long buffer, long offsetBytes, MemorySegment data, boolean wholePadded) implements Op {

        public UploadOp(long buffer, long offsetBytes, MemorySegment data) {
            this(buffer, offsetBytes, data, false);
        }
    }

    /**
     * An upload whose bytes lie in several segments, in order (a request's receive buffers): a device whose
     * memory the host addresses (one that {@linkplain dev.arrayd.devices.api.Device#streamsThroughRings streams
     * through rings}) copies each piece where it goes; for any other device, or a padded buffer's interior, the
     * pieces are first gathered into one array. Every piece must stay valid until the command's event completes.
     *
     * @param wholePadded as for {@link UploadOp}
     */
    public record ScatteredUploadOp(long buffer, long offsetBytes, List<MemorySegment> pieces, boolean wholePadded)
            implements Op {

        public ScatteredUploadOp {
            pieces = List.copyOf(pieces);
        }

        /** The bytes of {@code pieces} in all. */
        public static long sizeOf(List<MemorySegment> pieces) {
            long n = 0;
            for (MemorySegment p : pieces) {
                n += p.byteSize();
            }
            return n;
        }

        /** The pieces' bytes in all. */
        public long sizeBytes() {
            return sizeOf(pieces);
        }

        /** The pieces copied into one array of their own. */
        public MemorySegment gathered() {
            MemorySegment all = MemorySegment.ofArray(new byte[Math.toIntExact(sizeBytes())]);
            long at = 0;
            for (MemorySegment p : pieces) {
                MemorySegment.copy(p, 0, all, at, p.byteSize());
                at += p.byteSize();
            }
            return all;
        }
    }

    /**
     * @param maxBytes    most bytes this command may read (inline downloads are bounded by the message size)
     * @param wholePadded offsets into a padded buffer's whole padded array; false = into its interior
     * @param into     where the bytes go (a shared-memory region's slice, at most {@code maxBytes} long); null
     *                 = into the completion (inline)
     * @param resultArrays where an inline download's array comes from, given its length (it is overwritten whole);
     *                 null = a new array
     */
    public record DownloadOp(long buffer, long offsetBytes, long sizeBytes, long maxBytes, MemorySegment into,
                             boolean wholePadded, IntFunction<byte[]> resultArrays) implements Op {

        public DownloadOp(long buffer, long offsetBytes, long sizeBytes, long maxBytes, MemorySegment into,
                boolean wholePadded) {
            this(buffer, offsetBytes, sizeBytes, maxBytes, into, wholePadded, null);
        }

        public DownloadOp(long buffer, long offsetBytes, long sizeBytes, long maxBytes, MemorySegment into) {
            this(buffer, offsetBytes, sizeBytes, maxBytes, into, false);
        }

        public DownloadOp(long buffer, long offsetBytes, long sizeBytes, long maxBytes) {
            this(buffer, offsetBytes, sizeBytes, maxBytes, null, false);
        }
    }

    /**
     * Streams {@code sizeBytes} between the buffer at {@code offsetBytes} and a client's {@link SlotRing}: an upload
     * (into the buffer) when {@code upload}, else a download. Runs only on a stream the session created, on a device
     * that {@linkplain dev.arrayd.devices.api.Device#streamsThroughRings streams through rings}.
     *
     * @param sizeBytes   0 for a download: to the end of the buffer
     * @param wholePadded offsets into a padded buffer's whole padded array (its interior is refused: not contiguous)
     */
    public record RingOp(long buffer, long offsetBytes, long sizeBytes, SlotRing ring, boolean upload, boolean wholePadded)
            implements Op {}

    /**
     * The client wrote the host memory {@code buffer} lives in ({@link HostMemory}): that memory becomes its
     * current data, every other replica stale. Moves no bytes; ordered like a write of the buffer.
     */
    public record HostWrittenOp(long buffer) implements Op {}

    /** A launch argument: a buffer handle or a scalar value. */
    public sealed interface Arg {}

    public record BufferArg(long buffer) implements Arg {}

    public record ScalarArg(KernelArg.Scalar value) implements Arg {}

    /** The merge buffer of the launch's stream (filled by a merge copy on that stream); read-only. */
    public record MergeArg() implements Arg {}

    /**
     * {@code sizeBytes} bytes of a buffer's memory from {@code offsetBytes}, seen by the kernel as an array of the
     * parameter's dtype (whatever the buffer's): how a daemon addresses the slabs it keeps on a peer.
     */
    public record RangeArg(long buffer, long offsetBytes, long sizeBytes) implements Arg {}
}
