package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.Quote;
import dev.arrayd.devices.api.ir.Half;
import java.lang.foreign.MemorySegment;
import java.util.Map;

/**
 * Turns a {@link CommandSpec} into a {@link Prepared} command: resolves its handles in the caller's
 * session (another session's handle is simply not found) and checks shapes, ranges and dtypes. Runs
 * before the submit lock and changes nothing, so a batch that fails here leaves no trace. Launches are
 * checked by {@link LaunchValidator}; copies, fills, uploads and downloads here.
 */
final class CommandValidator {

    private final SchedulerContext ctx;
    private final LaunchValidator launches;

    CommandValidator(SchedulerContext ctx, Placement placement) {
        this.ctx = ctx;
        this.launches = new LaunchValidator(ctx, placement);
    }

    /**
     * Validates {@code spec} into {@code into} (returned).
     *
     * @param merges what earlier merge copies of the batch put in their streams' merge buffers (a merge copy
     *               adds to it), or null when the batch has no merge copy
     */
    Prepared prepare(Session s, CommandSpec spec, Map<Stream, DType> merges, Prepared into) {
        return switch (spec.op()) {
            case CommandSpec.LaunchOp l -> launches.prepare(s, spec, l, merges, into);
            case CommandSpec.CopyOp c -> copy(s, spec, c, merges, into);
            case CommandSpec.FillOp f -> fill(s, spec, f, into);
            case CommandSpec.UploadOp u -> upload(s, spec, u, into);
            case CommandSpec.DownloadOp d -> download(s, spec, d, into);
            case CommandSpec.HostWrittenOp h -> hostWritten(s, spec, h, into);
        };
    }

    private Prepared copy(Session s, CommandSpec spec, CommandSpec.CopyOp c, Map<Stream, DType> merges, Prepared into) {
        Buffer src = s.buffer(c.src(), "copy.src");
        if (c.srcStream() != 0) {
            if (!src.perStream) {
                throw ArraydException.invalid("copy.src_stream: " + Handles.format(c.srcStream()) + " (expected: 0; "
                        + src + " is not PER_STREAM, so it has no per-stream instances to choose from)");
            }
            s.stream(c.srcStream(), "copy.src_stream");
        }
        if (c.dst() == 0) {
            return transfer(s, spec, c, src, merges, into);
        }
        if (c.merge() != MergeMode.NONE) {
            throw ArraydException.invalid("copy.merge: " + c.merge() + " with a dst buffer (expected: no dst; a merge "
                    + "copy fills the merge buffer of its stream)");
        }
        Buffer dst = s.writableBuffer(c.dst(), "copy.dst");
        long size = c.sizeBytes() == 0 ? src.sizeBytes() - Math.min(c.srcOffsetBytes(), src.sizeBytes()) : c.sizeBytes();
        checkRange("copy.src", src, c.srcOffsetBytes(), size);
        checkRange("copy.dst", dst, c.dstOffsetBytes(), size);
        if (src == dst && c.srcOffsetBytes() < c.dstOffsetBytes() + size && c.dstOffsetBytes() < c.srcOffsetBytes() + size) {
            throw ArraydException.invalid("copy: ranges [" + c.srcOffsetBytes() + ", +" + size + ") and ["
                    + c.dstOffsetBytes() + ", +" + size + ") of " + src + " overlap");
        }
        Stream stream = streamOn(s, spec, c.device().isEmpty() ? null : ctx.device(c.device()), dst, "copy");
        CommandTemplate t = new CommandTemplate.Copy(c.srcOffsetBytes(), c.dstOffsetBytes(), size);
        if (src == dst) {
            return into.set(spec, stream, t, new Buffer[] {src}, new boolean[] {true}, new boolean[] {true},
                    new boolean[1], null, size, null);
        }
        boolean whole = c.dstOffsetBytes() == 0 && size == dst.sizeBytes();
        return into.set(spec, stream, t, new Buffer[] {src, dst}, new boolean[] {true, false},
                new boolean[] {false, true}, new boolean[] {false, whole}, null, size, null);
    }

    /** A copy with no dst: a prefetch to a device, or a merge copy into its stream's merge buffer. */
    private Prepared transfer(Session s, CommandSpec spec, CommandSpec.CopyOp c, Buffer src, Map<Stream, DType> merges,
            Prepared into) {
        Stream stream;
        if (spec.stream() != 0) {
            stream = s.stream(spec.stream(), "stream");
            if (!c.device().isEmpty() && !ctx.device(c.device()).equals(stream.device())) {
                throw ArraydException.invalid("copy.device: " + Quote.string(c.device()) + " (expected: " + stream.device().id()
                        + ", the device of " + stream + ")");
            }
        } else {
            if (c.device().isEmpty()) {
                throw ArraydException.invalid("copy: no dst, no device and no stream (expected: a dst buffer, or "
                        + "the device or stream to transfer to)");
            }
            stream = s.defaultStream(ctx.device(c.device()));
        }
        DeviceRuntime d = stream.device();
        if (!d.info().dtypes().contains(src.dtype())) {
            throw ArraydException.invalid("copy.src: " + src + " (its dtype is not supported by " + d.id() + ")");
        }
        CommandTemplate t;
        if (c.merge() == MergeMode.NONE) {
            t = new CommandTemplate.Prefetch();
        } else {
            merges.put(stream, src.dtype());
            t = new CommandTemplate.MergeCopy(c.merge());
        }
        return into.set(spec, stream, t, new Buffer[] {src}, new boolean[] {true}, new boolean[] {false}, new boolean[1],
                null, src.sizeBytes(), null);
    }

    private Prepared fill(Session s, CommandSpec spec, CommandSpec.FillOp f, Prepared into) {
        Buffer b = s.writableBuffer(f.buffer(), "fill.buffer");
        if (f.value() == null) {
            throw ArraydException.invalid("fill.value: unset (expected: " + b.dtype().wireName() + " scalar)");
        }
        long count = f.countElements() == 0 ? b.elements() - Math.min(f.offsetElements(), b.elements()) : f.countElements();
        if (f.offsetElements() < 0 || count < 0 || f.offsetElements() > b.elements() - count) {
            throw new ArraydException(ErrorCode.OUT_OF_RANGE, "fill: elements [" + f.offsetElements() + ", +" + count
                    + ") (expected: within the " + b.elements() + " elements of " + b + ")");
        }
        long pattern = fillPattern(b.dtype(), f.value());
        int width = b.dtype().byteSize();
        Stream stream = streamOn(s, spec, null, b, "fill");
        CommandTemplate t = new CommandTemplate.Fill(f.offsetElements() * width, count * width, pattern, width);
        return into.set(spec, stream, t, new Buffer[] {b}, new boolean[] {false}, new boolean[] {true},
                new boolean[] {count == b.elements()}, null, count * width, null);
    }

    private Prepared upload(Session s, CommandSpec spec, CommandSpec.UploadOp u, Prepared into) {
        Buffer b = s.writableBuffer(u.buffer(), "upload.buffer");
        MemorySegment data = u.data();
        int width = b.dtype().byteSize();
        if (u.offsetBytes() % width != 0 || data.byteSize() % width != 0) {
            throw ArraydException.invalid("upload: " + data.byteSize() + " bytes at offset " + u.offsetBytes()
                    + " (expected: whole " + b.dtype().wireName() + " elements, multiples of " + width + " bytes, for " + b + ")");
        }
        checkRange("upload", b, u.offsetBytes(), data.byteSize());
        Stream stream = streamOn(s, spec, null, b, "upload");
        boolean whole = u.offsetBytes() == 0 && data.byteSize() == b.sizeBytes();
        return into.set(spec, stream, new CommandTemplate.Upload(data, u.offsetBytes()), new Buffer[] {b},
                new boolean[] {false}, new boolean[] {true}, new boolean[] {whole}, null, data.byteSize(), null);
    }

    private Prepared hostWritten(Session s, CommandSpec spec, CommandSpec.HostWrittenOp h, Prepared into) {
        Buffer b = s.writableBuffer(h.buffer(), "host_written.buffer");
        if (b.hostMemory() == null) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, "host_written.buffer: " + b + " (expected: a buffer "
                    + "that lives in a shared-memory region, created with host_region)");
        }
        Stream stream = streamOn(s, spec, null, b, "host_written");
        return into.set(spec, stream, new CommandTemplate.HostWritten(), new Buffer[] {b}, new boolean[] {false},
                new boolean[] {true}, new boolean[] {true}, null, 0, null);
    }

    private Prepared download(Session s, CommandSpec spec, CommandSpec.DownloadOp d, Prepared into) {
        Buffer b = s.buffer(d.buffer(), "download.buffer");
        long size = d.sizeBytes() == 0 ? b.sizeBytes() - Math.min(d.offsetBytes(), b.sizeBytes()) : d.sizeBytes();
        checkRange("download", b, d.offsetBytes(), size);
        if (d.into() != null) {
            if (size > d.into().byteSize()) {
                throw new ArraydException(dev.arrayd.devices.api.ErrorCode.OUT_OF_RANGE, "download.into_region: "
                        + size + " bytes of " + b + " (expected: at most " + d.into().byteSize() + ", what the region "
                        + "holds from into_region.offset_bytes)");
            }
            Stream stream = streamOn(s, spec, null, b, "download");
            return into.set(spec, stream, new CommandTemplate.Download(d.offsetBytes(), size, d.into()), new Buffer[] {b},
                    new boolean[] {true}, new boolean[] {false}, new boolean[1], null, size, null);
        }
        if (size > d.maxBytes()) {
            throw ArraydException.invalid("download: " + size + " bytes of " + b + " (expected: at most " + d.maxBytes()
                    + " in one command; read larger ranges with BufferService.ReadBuffer)");
        }
        if (size > Integer.MAX_VALUE - 16) {
            throw ArraydException.invalid("download.size_bytes: " + size + " (expected: < 2 GiB per command)");
        }
        Stream stream = streamOn(s, spec, null, b, "download");
        return into.set(spec, stream, new CommandTemplate.Download(d.offsetBytes(), size, null), new Buffer[] {b},
                new boolean[] {true}, new boolean[] {false}, new boolean[1], null, size, null);
    }

    /**
     * The stream a data command runs on: the one it names (any device: its buffers are made current
     * there), else the default stream on {@code device}, else on the buffer's preferred device (where its
     * data is current).
     */
    private static Stream streamOn(Session s, CommandSpec spec, DeviceRuntime device, Buffer b, String what) {
        if (spec.stream() == 0) {
            return s.defaultStream(device != null ? device : b.preferredDevice());
        }
        Stream st = s.stream(spec.stream(), "stream");
        if (device != null && !st.device().equals(device)) {
            throw ArraydException.invalid(what + ".device: \"" + device.id() + "\" (expected: " + st.device().id()
                    + ", the device of " + st + ")");
        }
        if (!st.device().info().dtypes().contains(b.dtype())) {
            throw ArraydException.invalid("stream: " + st + " (" + b + "'s dtype is not supported there)");
        }
        return st;
    }

    private static void checkRange(String what, Buffer b, long offset, long size) {
        if (offset < 0 || size < 0 || offset > b.sizeBytes() - size) {
            throw new ArraydException(ErrorCode.OUT_OF_RANGE, what + ": bytes [" + Long.toUnsignedString(offset) + ", +"
                    + Long.toUnsignedString(size) + ") (expected: within the " + b.sizeBytes() + " bytes of " + b + ")");
        }
    }

    /** The fill pattern of {@code v} for a buffer of {@code target} (f16 and bf16 buffers take an f32 value). */
    static long fillPattern(DType target, KernelArg.Scalar v) {
        DType given = v.dtype();
        boolean halfFromF32 = (target == DType.F16 || target == DType.BF16) && given == DType.F32;
        if (given != target && !halfFromF32) {
            throw ArraydException.invalid("fill.value: " + given.wireName() + " scalar (expected: "
                    + (target == DType.F16 || target == DType.BF16 ? "f32" : target.wireName()) + " for a buffer of "
                    + target.wireName() + ")");
        }
        return switch (target) {
            case F16 -> Float.floatToFloat16(Float.intBitsToFloat((int) v.bits())) & 0xffffL;
            case BF16 -> Half.f32ToBf16(Float.intBitsToFloat((int) v.bits())) & 0xffffL;
            case F32, I32 -> v.bits() & 0xffff_ffffL;
            case U8 -> v.bits() & 0xffL;
            case F64, I64 -> v.bits();
        };
    }
}
