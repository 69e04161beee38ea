package dev.arrayd.client;

import com.google.protobuf.ByteString;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.Copy;
import dev.arrayd.proto.v1.Download;
import dev.arrayd.proto.v1.Fill;
import dev.arrayd.proto.v1.Upload;
import java.nio.ByteBuffer;

/**
 * The session's data commands (copies, transfers, merge copies, fills, inline uploads and downloads) as the wire's
 * {@code Command}s, checked on this side first: ranges within the buffers, element counts, the size of an inline
 * upload, a fill value that fits the buffer's dtype. Each throws IllegalArgumentException naming the bad value.
 */
final class DataCommands {

    private DataCommands() {}

    /** Makes {@code src} current on {@code device} (a prefetch). */
    static Command.Builder transfer(BufferHandle src, String device) {
        return Command.newBuilder().setCopy(Copy.newBuilder().setSrc(src.id()).setDevice(device));
    }

    /** Copies {@code src} as {@code srcStream} sees it (its per-stream instance) into {@code dst}. */
    static Command.Builder copyFromStream(BufferHandle src, StreamHandle srcStream, BufferHandle dst) {
        return Command.newBuilder().setCopy(Copy.newBuilder().setSrc(src.id()).setDst(dst.id())
                .setSrcStream(srcStream.id()));
    }

    /** Fills the merge buffer of the stream the command runs on from {@code src} ({@code srcStream}'s instance, or null). */
    static Command.Builder mergeCopy(BufferHandle src, StreamHandle srcStream, MergeMode mode) {
        Copy.Builder copy = Copy.newBuilder().setSrc(src.id()).setMerge(Protos.mergeMode(mode));
        if (srcStream != null) {
            copy.setSrcStream(srcStream.id());
        }
        return Command.newBuilder().setCopy(copy);
    }

    /** {@code sizeBytes} (0: to the end of {@code src}) from {@code src} into {@code dst}. */
    static Command.Builder copy(BufferHandle src, long srcOffsetBytes, BufferHandle dst, long dstOffsetBytes,
            long sizeBytes, boolean wholePadded) {
        BufferChecks.range(src, "srcOffsetBytes", srcOffsetBytes, "sizeBytes", sizeBytes, wholePadded);
        long n = sizeBytes == 0 ? BufferChecks.addressable(src, wholePadded) - srcOffsetBytes : sizeBytes;
        BufferChecks.range(dst, "dstOffsetBytes", dstOffsetBytes, "sizeBytes", n, wholePadded);
        return Command.newBuilder().setCopy(Copy.newBuilder()
                .setSrc(src.id())
                .setDst(dst.id())
                .setSrcOffsetBytes(srcOffsetBytes)
                .setDstOffsetBytes(dstOffsetBytes)
                .setSizeBytes(sizeBytes)
                .setWholePadded(wholePadded));
    }

    /** {@code value} into {@code countElements} elements (0: to the end) from {@code offsetElements}. */
    static Command.Builder fill(BufferHandle buffer, Number value, long offsetElements, long countElements,
            boolean wholePadded) {
        long elements = BufferChecks.addressable(buffer, wholePadded) / buffer.dtype().byteSize();
        if (offsetElements < 0 || offsetElements > elements) {
            throw new IllegalArgumentException("offsetElements: " + offsetElements + " (expected: 0 to " + elements
                    + ", the element count of buffer " + buffer.id() + ")");
        }
        if (countElements < 0 || countElements > elements - offsetElements) {
            throw new IllegalArgumentException("countElements: " + countElements + " (expected: 0 to "
                    + (elements - offsetElements) + " from offsetElements " + offsetElements + " in buffer "
                    + buffer.id() + ")");
        }
        return Command.newBuilder().setFill(Fill.newBuilder()
                .setBuffer(buffer.id())
                .setValue(Scalars.of(value, buffer.dtype(), "value", "buffer " + buffer.id() + " of type "
                        + buffer.dtype()))
                .setOffsetElements(offsetElements)
                .setCountElements(countElements)
                .setWholePadded(wholePadded));
    }

    /** {@code data}'s remaining bytes (copied now) at {@code offsetBytes}: at most {@link Session#MAX_UPLOAD_BYTES}. */
    static Command.Builder upload(BufferHandle buffer, long offsetBytes, ByteBuffer data, boolean wholePadded) {
        if (data.remaining() > Session.MAX_UPLOAD_BYTES) {
            throw new IllegalArgumentException("data: " + data.remaining() + " bytes (expected: <= "
                    + Session.MAX_UPLOAD_BYTES + " for an inline upload; use write)");
        }
        BufferChecks.range(buffer, "offsetBytes", offsetBytes, "data", data.remaining(), wholePadded);
        return Command.newBuilder().setUpload(Upload.newBuilder()
                .setBuffer(buffer.id())
                .setOffsetBytes(offsetBytes)
                .setData(ByteString.copyFrom(data.duplicate()))
                .setWholePadded(wholePadded));
    }

    /** {@code sizeBytes} (0: to the end) from {@code offsetBytes}; the completion carries them. */
    static Command.Builder download(BufferHandle buffer, long offsetBytes, long sizeBytes, boolean wholePadded) {
        BufferChecks.range(buffer, "offsetBytes", offsetBytes, "sizeBytes", sizeBytes, wholePadded);
        return Command.newBuilder().setDownload(Download.newBuilder()
                .setBuffer(buffer.id())
                .setOffsetBytes(offsetBytes)
                .setSizeBytes(sizeBytes)
                .setWholePadded(wholePadded));
    }
}
