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
            case CommandSpec.ScatteredUploadOp u -> scatteredUpload(s, spec, u, into);
            case CommandSpec.DownloadOp d -> download(s, spec, d, into);
            case CommandSpec.HostWrittenOp h -> hostWritten(s, spec, h, into);
            case CommandSpec.RingOp r -> ring(s, spec, r, into);
        };
    }

    private Prepared copy(Session s, CommandSpec spec, CommandSpec.CopyOp c, Map<Stream, DType> merges, Prepared into) {
        Buffer src = s.buffer(c.src(), "copy.src");
        if (c.dst() == 0) {
            src = src.storage();
        }
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
        Buffer dstView = s.writableBuffer(c.dst(), "copy.dst");
        Buffer srcView = src;
        Layout srcLayout = addressed(srcView, c.wholePadded());
        Layout dstLayout = addressed(dstView, c.wholePadded());
        src = srcView.storage();
        Buffer dst = dstView.storage();
        long srcBytes = srcLayout.elements() * src.dtype().byteSize();
        long size = c.sizeBytes() == 0 ? srcBytes - Math.min(c.srcOffsetBytes(), srcBytes) : c.sizeBytes();
        checkRange("copy.src", srcView, c.srcOffsetBytes(), size, srcLayout);
        checkRange("copy.dst", dstView, c.dstOffsetBytes(), size, dstLayout);
        CommandTemplate t;
        if (srcLayout.isPadded() || dstLayout.isPadded()) {
            int width = src.dtype().byteSize();
            if (src.dtype() != dst.dtype() || c.srcOffsetBytes() % width != 0 || c.dstOffsetBytes() % width != 0
                    || size % width != 0) {
                throw ArraydException.invalid("copy: " + size + " bytes from offset " + c.srcOffsetBytes() + " to offset "
                        + c.dstOffsetBytes() + " (expected: whole elements of one dtype into or out of the interior of a "
                        + "padded buffer; " + srcView + " to " + dstView + ")");
            }
            long count = size / width;
            Pieces.count(srcLayout, c.srcOffsetBytes() / width, count, "copy.src");
            Pieces.count(dstLayout, c.dstOffsetBytes() / width, count, "copy.dst");
            if (src == dst && count > 0 && overlap(srcLayout, c.srcOffsetBytes() / width, dstLayout,
                    c.dstOffsetBytes() / width, count)) {
                throw ArraydException.invalid("copy: interior ranges [" + c.srcOffsetBytes() + ", +" + size + ") and ["
                        + c.dstOffsetBytes() + ", +" + size + ") of " + src + " may overlap in memory");
            }
            t = count == 0 ? new CommandTemplate.Copy(0, 0, 0)
                    : new CommandTemplate.InteriorCopy(srcLayout, c.srcOffsetBytes() / width, dstLayout,
                            c.dstOffsetBytes() / width, count, width);
        } else {
            if (src == dst && c.srcOffsetBytes() < c.dstOffsetBytes() + size && c.dstOffsetBytes() < c.srcOffsetBytes() + size) {
                throw ArraydException.invalid("copy: ranges [" + c.srcOffsetBytes() + ", +" + size + ") and ["
                        + c.dstOffsetBytes() + ", +" + size + ") of " + src + " overlap");
            }
            t = new CommandTemplate.Copy(c.srcOffsetBytes(), c.dstOffsetBytes(), size);
        }
        Stream stream = streamOn(s, spec, c.device().isEmpty() ? null : ctx.device(c.device()), dst, "copy");
        if (src == dst) {
            return into.set(spec, stream, t, new Buffer[] {src}, new boolean[] {true}, new boolean[] {true},
                    new boolean[1], null, size, null);
        }
        boolean whole = !dstLayout.isPadded() && c.dstOffsetBytes() == 0 && size == dst.sizeBytes();
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
        Buffer v = s.writableBuffer(f.buffer(), "fill.buffer");
        Buffer b = v.storage();
        if (f.value() == null) {
            throw ArraydException.invalid("fill.value: unset (expected: " + b.dtype().wireName() + " scalar)");
        }
        Layout layout = addressed(v, f.wholePadded());
        long elements = layout.elements();
        long count = f.countElements() == 0 ? elements - Math.min(f.offsetElements(), elements) : f.countElements();
        if (f.offsetElements() < 0 || count < 0 || f.offsetElements() > elements - count) {
            throw new ArraydException(ErrorCode.OUT_OF_RANGE, "fill: elements [" + f.offsetElements() + ", +" + count
                    + ") (expected: within the " + elements + (layout.isPadded() ? " interior" : "") + " elements of "
                    + v + ")");
        }
        long pattern = fillPattern(b.dtype(), f.value());
        int width = b.dtype().byteSize();
        Stream stream = streamOn(s, spec, null, b, "fill");
        CommandTemplate t;
        if (layout.isPadded() && count > 0) {
            Pieces.count(layout, f.offsetElements(), count, "fill");
            t = new CommandTemplate.InteriorFill(layout, f.offsetElements(), count, width, pattern);
        } else {
            t = new CommandTemplate.Fill(f.offsetElements() * width, count * width, pattern, width);
        }
        return into.set(spec, stream, t, new Buffer[] {b}, new boolean[] {false}, new boolean[] {true},
                new boolean[] {!layout.isPadded() && count == b.elements()}, null, count * width, null);
    }

    private Prepared upload(Session s, CommandSpec spec, CommandSpec.UploadOp u, Prepared into) {
        Buffer v = s.writableBuffer(u.buffer(), "upload.buffer");
        Buffer b = v.storage();
        MemorySegment data = u.data();
        int width = b.dtype().byteSize();
        wholeElements("upload", v, u.offsetBytes(), data.byteSize());
        Layout layout = addressed(v, u.wholePadded());
        checkRange("upload", v, u.offsetBytes(), data.byteSize(), layout);
        Stream stream = streamOn(s, spec, inPlace(spec, b, data), b, "upload");
        if (layout.isPadded() && data.byteSize() > 0) {
            Pieces.count(layout, u.offsetBytes() / width, data.byteSize() / width, "upload");
            return into.set(spec, stream, new CommandTemplate.InteriorUpload(data, layout, u.offsetBytes() / width, width),
                    new Buffer[] {b}, new boolean[] {false}, new boolean[] {true}, new boolean[1], null, data.byteSize(),
                    null);
        }
        boolean whole = u.offsetBytes() == 0 && data.byteSize() == b.sizeBytes();
        return into.set(spec, stream, new CommandTemplate.Upload(data, u.offsetBytes()), new Buffer[] {b},
                new boolean[] {false}, new boolean[] {true}, new boolean[] {whole}, null, data.byteSize(), null);
    }

    private Prepared scatteredUpload(Session s, CommandSpec spec, CommandSpec.ScatteredUploadOp u, Prepared into) {
        Buffer v = s.writableBuffer(u.buffer(), "upload.buffer");
        Buffer b = v.storage();
        Layout layout = addressed(v, u.wholePadded());
        Stream stream = streamOn(s, spec, null, b, "upload");
        if (layout.isPadded() || !stream.device().device().streamsThroughRings()) {
            return upload(s, spec, new CommandSpec.UploadOp(u.buffer(), u.offsetBytes(), u.gathered(), u.wholePadded()),
                    into);
        }
        long size = u.sizeBytes();
        wholeElements("upload", v, u.offsetBytes(), size);
        checkRange("upload", v, u.offsetBytes(), size, layout);
        boolean whole = u.offsetBytes() == 0 && size == b.sizeBytes();
        return into.set(spec, stream, new CommandTemplate.ScatteredUpload(u.pieces(), u.offsetBytes()),
                new Buffer[] {b}, new boolean[] {false}, new boolean[] {true}, new boolean[] {whole}, null, size, null);
    }

    private Prepared hostWritten(Session s, CommandSpec spec, CommandSpec.HostWrittenOp h, Prepared into) {
        Buffer b = s.writableBuffer(h.buffer(), "host_written.buffer").storage();
        if (b.hostMemory() == null) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, "host_written.buffer: " + b + " (expected: a buffer "
                    + "that lives in a shared-memory region, created with host_region)");
        }
        Stream stream = streamOn(s, spec, null, b, "host_written");
        return into.set(spec, stream, new CommandTemplate.HostWritten(), new Buffer[] {b}, new boolean[] {false},
                new boolean[] {true}, new boolean[] {true}, null, 0, null);
    }

    /**
     * A transfer through a client's ring: contiguous bytes only, on a stream the session created on a device that
     * streams through rings (it holds its stream while it waits for the client, so never a shared one).
     */
    private Prepared ring(Session s, CommandSpec spec, CommandSpec.RingOp r, Prepared into) {
        String what = r.upload() ? "upload.from_ring" : "download.into_ring";
        Buffer v = r.upload() ? s.writableBuffer(r.buffer(), "upload.buffer") : s.buffer(r.buffer(), "download.buffer");
        Buffer b = v.storage();
        Layout layout = addressed(v, r.wholePadded());
        if (layout.isPadded()) {
            throw ArraydException.invalid(what + ": the interior of " + v + ", which is padded (expected: whole_padded, "
                    + "or a region slice, which reaches an interior)");
        }
        int width = b.dtype().byteSize();
        long bytes = layout.elements() * width;
        long size = r.sizeBytes() == 0 ? bytes - Math.min(r.offsetBytes(), bytes) : r.sizeBytes();
        if (r.upload()) {
            wholeElements(what, v, r.offsetBytes(), size);
        }
        checkRange(what, v, r.offsetBytes(), size, layout);
        if (spec.stream() == 0) {
            throw ArraydException.invalid(what + ": on the default stream (expected: a stream the session created; a "
                    + "ring transfer holds its stream while it waits for the client)");
        }
        Stream stream = streamOn(s, spec, null, b, what);
        if (stream.kind() != StreamKind.DEDICATED || !stream.device().device().streamsThroughRings()) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, what + ": " + stream + " (expected: a stream of the "
                    + "session's own on a device whose streams copy host memory themselves, such as a cpu device)");
        }
        boolean whole = r.upload() && r.offsetBytes() == 0 && size == b.sizeBytes();
        return into.set(spec, stream, new CommandTemplate.RingTransfer(r.offsetBytes(), size, r.ring(), r.upload()),
                new Buffer[] {b}, new boolean[] {!r.upload()}, new boolean[] {r.upload()}, new boolean[] {whole}, null, size,
                null);
    }

    private Prepared download(Session s, CommandSpec spec, CommandSpec.DownloadOp d, Prepared into) {
        Buffer v = s.buffer(d.buffer(), "download.buffer");
        Buffer b = v.storage();
        Layout layout = addressed(v, d.wholePadded());
        int width = b.dtype().byteSize();
        long bytes = layout.elements() * width;
        long size = d.sizeBytes() == 0 ? bytes - Math.min(d.offsetBytes(), bytes) : d.sizeBytes();
        checkRange("download", v, d.offsetBytes(), size, layout);
        boolean interior = layout.isPadded() && size > 0;
        if (interior) {
            if (d.offsetBytes() % width != 0 || size % width != 0) {
                throw ArraydException.invalid("download: " + size + " bytes at offset " + d.offsetBytes() + " (expected: "
                        + "whole " + b.dtype().wireName() + " elements of the interior of " + v + ")");
            }
            Pieces.count(layout, d.offsetBytes() / width, size / width, "download");
        }
        if (d.into() != null) {
            if (size > d.into().byteSize()) {
                throw new ArraydException(dev.arrayd.devices.api.ErrorCode.OUT_OF_RANGE, "download.into_region: "
                        + size + " bytes of " + b + " (expected: at most " + d.into().byteSize() + ", what the region "
                        + "holds from into_region.offset_bytes)");
            }
            Stream stream = streamOn(s, spec, inPlace(spec, b, d.into()), b, "download");
            CommandTemplate t = interior
                    ? new CommandTemplate.InteriorDownload(layout, d.offsetBytes() / width, size / width, width, d.into())
                    : new CommandTemplate.Download(d.offsetBytes(), size, d.into(), null);
            return into.set(spec, stream, t, new Buffer[] {b},
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
        CommandTemplate t = interior
                ? new CommandTemplate.InteriorDownload(layout, d.offsetBytes() / width, size / width, width, null)
                : new CommandTemplate.Download(d.offsetBytes(), size, null, d.resultArrays());
        return into.set(spec, stream, t, new Buffer[] {b},
                new boolean[] {true}, new boolean[] {false}, new boolean[1], null, size, null);
    }

    /**
     * The device a transfer between {@code b} and {@code bytes} runs on when it names no stream and {@code bytes} are
     * the region bytes {@code b} lives in: the one that uses them in place, where they need no copy once current (and
     * a transfer into them is ordered like any write there); else null (the usual choice).
     */
    private static DeviceRuntime inPlace(CommandSpec spec, Buffer b, MemorySegment bytes) {
        return spec.stream() == 0 && b.twin != null && b.livesIn(bytes) ? b.twin.device : null;
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

    /** A write of {@code size} bytes at {@code offset} covers whole elements of {@code v}'s dtype. */
    private static void wholeElements(String what, Buffer v, long offset, long size) {
        int width = v.storage().dtype().byteSize();
        if (offset % width != 0 || size % width != 0) {
            throw ArraydException.invalid(what + ": " + size + " bytes at offset " + offset + " (expected: whole "
                    + v.storage().dtype().wireName() + " elements, multiples of " + width + " bytes, for " + v + ")");
        }
    }

    /** {@code [offset, +size)} within the bytes {@code layout} addresses of {@code b} (its interior, or all of it). */
    private static void checkRange(String what, Buffer b, long offset, long size, Layout layout) {
        long bytes = layout.elements() * b.dtype().byteSize();
        if (offset < 0 || size < 0 || offset > bytes - size) {
            throw new ArraydException(ErrorCode.OUT_OF_RANGE, what + ": bytes [" + Long.toUnsignedString(offset) + ", +"
                    + Long.toUnsignedString(size) + ") (expected: within the " + bytes + (layout.isPadded() ? " interior" : "")
                    + " bytes of " + b + ")");
        }
    }

    /**
     * What a data command addresses of buffer {@code v}: its interior, in its own layout; or, with
     * {@code wholePadded} (and for every unpadded buffer), all of its memory as one dense array.
     */
    static Layout addressed(Buffer v, boolean wholePadded) {
        // an unpadded layout addresses all of the memory as it is: only a padded one seen whole needs a new one
        return wholePadded && v.isPadded() ? Layout.dense(v.layout().storageDims()) : v.layout();
    }

    /**
     * Whether two interior ranges of one memory may share an element: their hulls in memory (first piece's
     * start to last piece's end) intersect.
     */
    private static boolean overlap(Layout a, long aFirst, Layout b, long bFirst, long count) {
        long aLo = a.piece(aFirst, count, 0).storage();
        Layout.Piece aLast = a.piece(aFirst, count, a.pieces(aFirst, count) - 1);
        long bLo = b.piece(bFirst, count, 0).storage();
        Layout.Piece bLast = b.piece(bFirst, count, b.pieces(bFirst, count) - 1);
        return aLo < bLast.storage() + bLast.length() && bLo < aLast.storage() + aLast.length();
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
