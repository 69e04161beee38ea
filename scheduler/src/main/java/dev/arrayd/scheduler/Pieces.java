package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.MemRef;
import java.lang.foreign.MemorySegment;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.List;

/**
 * The device commands that move or fill a range of interior elements of a padded buffer: one per piece
 * of the range ({@link Layout#piece}), as one {@link DeviceCommand.Sequence}. Uploads, downloads and fills
 * compute their parts on access (a 4096-row interior is 4096 parts, held as five numbers); a copy between
 * two layouts lists its parts, cut wherever either side's piece ends.
 */
final class Pieces {

    private Pieces() {
    }

    /** Parts of one command at most (a device command list is indexed by int). */
    static final long MAX_PARTS = Integer.MAX_VALUE - 8;

    /** The pieces of {@code count} interior elements from {@code first}: checked to fit one command. */
    static int count(Layout layout, long first, long count, String what) {
        long n = layout.pieces(first, count);
        if (n > MAX_PARTS) {
            throw ArraydException.invalid(what + ": " + n + " separate pieces of the interior of " + layout
                    + " (expected: at most " + MAX_PARTS + "; address the whole padded array instead)");
        }
        return (int) n;
    }

    /** Uploads {@code data} into interior elements {@code [first, ...)} of {@code whole}. */
    static DeviceCommand uploads(MemorySegment data, MemRef whole, Layout layout, long first, int width) {
        long count = data.byteSize() / width;
        int n = (int) layout.pieces(first, count);
        return new DeviceCommand.Sequence(new AbstractList<>() {
            @Override
            public DeviceCommand get(int i) {
                Layout.Piece p = layout.piece(first, count, i);
                return new DeviceCommand.Upload(data.asSlice(p.logical() * width, p.length() * width),
                        slice(whole, p, width));
            }

            @Override
            public int size() {
                return n;
            }
        });
    }

    /** Downloads interior elements {@code [first, first + count)} of {@code whole} into {@code into}. */
    static DeviceCommand downloads(MemRef whole, Layout layout, long first, long count, int width, MemorySegment into) {
        int n = (int) layout.pieces(first, count);
        return new DeviceCommand.Sequence(new AbstractList<>() {
            @Override
            public DeviceCommand get(int i) {
                Layout.Piece p = layout.piece(first, count, i);
                return new DeviceCommand.Download(slice(whole, p, width), into.asSlice(p.logical() * width,
                        p.length() * width));
            }

            @Override
            public int size() {
                return n;
            }
        });
    }

    /** Fills interior elements {@code [first, first + count)} of {@code whole} with {@code pattern}. */
    static DeviceCommand fills(MemRef whole, Layout layout, long first, long count, int width, long pattern) {
        int n = (int) layout.pieces(first, count);
        return new DeviceCommand.Sequence(new AbstractList<>() {
            @Override
            public DeviceCommand get(int i) {
                return new DeviceCommand.Fill(slice(whole, layout.piece(first, count, i), width), pattern, width);
            }

            @Override
            public int size() {
                return n;
            }
        });
    }

    /**
     * A new padded buffer's first contents: {@code pad} over all of it, then zeros over the interior (one
     * command: a fill of the whole, then one per interior run).
     */
    static DeviceCommand padded(MemRef whole, Layout layout, int width, long pad) {
        long count = layout.elements();
        int n = count(layout, 0, count, "padding");
        DeviceCommand all = new DeviceCommand.Fill(whole, pad, width);
        return new DeviceCommand.Sequence(new AbstractList<>() {
            @Override
            public DeviceCommand get(int i) {
                return i == 0 ? all : new DeviceCommand.Fill(slice(whole, layout.piece(0, count, i - 1), width), 0, width);
            }

            @Override
            public int size() {
                return n + 1;
            }
        });
    }

    /**
     * Copies {@code count} elements from interior {@code srcFirst} of {@code src} to interior {@code dstFirst}
     * of {@code dst} (either layout may be dense), cut where either side's piece ends.
     */
    static DeviceCommand copies(MemRef src, Layout srcLayout, long srcFirst, MemRef dst, Layout dstLayout, long dstFirst,
            long count, int width) {
        List<DeviceCommand> parts = new ArrayList<>();
        long srcPieces = srcLayout.pieces(srcFirst, count);
        long dstPieces = dstLayout.pieces(dstFirst, count);
        int si = 0;
        int di = 0;
        long done = 0;
        Layout.Piece sp = srcPieces == 0 ? null : srcLayout.piece(srcFirst, count, 0);
        Layout.Piece dp = dstPieces == 0 ? null : dstLayout.piece(dstFirst, count, 0);
        while (done < count) {
            long sEnd = sp.logical() + sp.length();
            long dEnd = dp.logical() + dp.length();
            long end = Math.min(sEnd, dEnd);
            long len = end - done;
            parts.add(new DeviceCommand.Copy(
                    new MemRef(src.poolId(), src.offset() + (sp.storage() + done - sp.logical()) * width, len * width),
                    new MemRef(dst.poolId(), dst.offset() + (dp.storage() + done - dp.logical()) * width, len * width)));
            done = end;
            if (end == sEnd && ++si < srcPieces) {
                sp = srcLayout.piece(srcFirst, count, si);
            }
            if (end == dEnd && ++di < dstPieces) {
                dp = dstLayout.piece(dstFirst, count, di);
            }
        }
        return new DeviceCommand.Sequence(parts);
    }

    private static MemRef slice(MemRef whole, Layout.Piece p, int width) {
        return new MemRef(whole.poolId(), whole.offset() + p.storage() * width, p.length() * width);
    }
}
