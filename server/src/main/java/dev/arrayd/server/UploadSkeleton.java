package dev.arrayd.server;

import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CommandBatch;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.Upload;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A serialized {@code ExecuteRequest} that lies in the transport's receive buffers, split into its skeleton
 * (every byte but its large uploads' data, to parse as usual) and that data, left where it lies: the pieces of
 * each {@code batch.commands[i].upload.data} of at least {@link #MIN_LIFTED_BYTES}, by command index.
 *
 * <p>Only a request the parser would read the same way is split: a field on the way to an upload's data that
 * occurs twice in one message (which protobuf would merge), a group, or anything malformed leaves the request
 * whole ({@link #split} returns null), and the ordinary parser reads it, and refuses it when it must.
 */
final class UploadSkeleton {

    /** Smallest upload data left in the receive buffers; smaller data stays in the skeleton. */
    static final int MIN_LIFTED_BYTES = 64 << 10;

    private static final int VARINT = 0;
    private static final int FIXED64 = 1;
    private static final int LEN = 2;
    private static final int FIXED32 = 5;

    /** @param skeleton the request without its lifted data; {@code data}: each lifted field's pieces, by command index */
    record Split(byte[] skeleton, Map<Integer, List<MemorySegment>> data) {}

    private final ByteBuffer[] pieces;
    private final long[] starts; // where each piece starts in the request
    private final long size;
    private final Map<Integer, List<MemorySegment>> lifted = new HashMap<>();
    private int command = -1; // index of the command being walked

    private UploadSkeleton(List<ByteBuffer> buffers) {
        pieces = buffers.toArray(ByteBuffer[]::new);
        starts = new long[pieces.length + 1];
        for (int i = 0; i < pieces.length; i++) {
            starts[i + 1] = starts[i] + pieces[i].remaining();
        }
        size = starts[pieces.length];
    }

    /**
     * Splits the request that {@code buffers} hold, in order (each from its position to its limit, which are
     * not changed); null when it has no data to lift or is not split (see the class comment).
     */
    static Split split(List<ByteBuffer> buffers) {
        UploadSkeleton s = new UploadSkeleton(buffers);
        try {
            // a look first, writing nothing: most requests (a batch of launches) have nothing to lift
            if (!s.walk(0, 0, s.size, null) || s.lifted.isEmpty()) {
                return null;
            }
            s.lifted.clear();
            s.command = -1;
            ByteArrayOutputStream out = new ByteArrayOutputStream(256);
            s.walk(0, 0, s.size, out);
            return new Split(out.toByteArray(), s.lifted);
        } catch (Malformed e) {
            return null;
        }
    }

    /** The field numbers from the request down to an upload's data, one per level. */
    private static final int[] PATH = {ExecuteRequest.BATCH_FIELD_NUMBER, CommandBatch.COMMANDS_FIELD_NUMBER,
            Command.UPLOAD_FIELD_NUMBER, Upload.DATA_FIELD_NUMBER};
    /** The level whose path field repeats by design (a batch's commands). */
    private static final int REPEATED_LEVEL = 1;

    /**
     * Writes the message at {@code [from, to)}, of nesting level {@code level}, to {@code out} (null: writes
     * nothing), with the path field of its level walked into (or lifted at the last level); false when the
     * request is not split.
     */
    private boolean walk(int level, long from, long to, ByteArrayOutputStream out) {
        long pos = from;
        boolean seen = false;
        while (pos < to) {
            long fieldStart = pos;
            long tag = varint(pos, to);
            pos += varintSize(tag);
            int wire = (int) (tag & 7);
            long field = tag >>> 3;
            if (field == 0) {
                throw new Malformed();
            }
            switch (wire) {
                case VARINT -> pos += varintSize(varint(pos, to));
                case FIXED64 -> pos += 8;
                case FIXED32 -> pos += 4;
                case LEN -> {
                    long length = varint(pos, to);
                    pos += varintSize(length);
                    if (length < 0 || length > to - pos) { // (a varint of 2^63 or more reads negative)
                        throw new Malformed();
                    }
                    if (field == PATH[level]) {
                        if (seen && level != REPEATED_LEVEL) {
                            return false; // protobuf would merge the two: the ordinary parser reads it
                        }
                        seen = true;
                        if (level == REPEATED_LEVEL) {
                            command++;
                        }
                        if (level == PATH.length - 1) {
                            if (length >= MIN_LIFTED_BYTES) {
                                lifted.put(command, segments(pos, length));
                            } else {
                                copy(fieldStart, pos + length, out);
                            }
                        } else {
                            ByteArrayOutputStream inner = out == null ? null : new ByteArrayOutputStream(64);
                            if (!walk(level + 1, pos, pos + length, inner)) {
                                return false;
                            }
                            if (out != null) {
                                copy(fieldStart, fieldStart + varintSize(tag), out);
                                writeVarint(inner.size(), out);
                                out.writeBytes(inner.toByteArray());
                            }
                        }
                        pos += length;
                        continue;
                    }
                    pos += length;
                }
                default -> {
                    return false; // a group or an unknown wire type: the ordinary parser says what is wrong
                }
            }
            if (pos > to) {
                throw new Malformed();
            }
            copy(fieldStart, pos, out);
        }
        return true;
    }

    /** The varint at {@code pos}, which must end before {@code to}. */
    private long varint(long pos, long to) {
        long value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos >= to) {
                throw new Malformed();
            }
            int b = get(pos++);
            value |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                return value;
            }
        }
        throw new Malformed();
    }

    private static int varintSize(long value) {
        int n = 1;
        while ((value & ~0x7fL) != 0) {
            value >>>= 7;
            n++;
        }
        return n;
    }

    private static void writeVarint(long value, ByteArrayOutputStream out) {
        while ((value & ~0x7fL) != 0) {
            out.write((int) (value & 0x7f) | 0x80);
            value >>>= 7;
        }
        out.write((int) value);
    }

    private int piece(long pos) {
        int lo = 0;
        int hi = pieces.length - 1;
        while (lo < hi) { // the last piece that starts at or before pos
            int mid = (lo + hi + 1) >>> 1;
            if (starts[mid] <= pos) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    private int last; // the piece the last byte read came from: reads mostly go forward within one piece

    private int get(long pos) {
        int p = last;
        if (pos < starts[p] || pos >= starts[p + 1]) {
            p = piece(pos);
            while (starts[p + 1] <= pos) { // (skips empty pieces)
                p++;
            }
            last = p;
        }
        ByteBuffer b = pieces[p];
        return b.get(b.position() + (int) (pos - starts[p])) & 0xff;
    }

    /** What {@link #pieces(long, long, Piece)} hands over: {@code n} bytes of {@code b} from its index {@code at}. */
    private interface Piece {
        void accept(ByteBuffer b, int at, int n);
    }

    /** The request's bytes {@code [from, to)}, piece by piece, in order. */
    private void pieces(long from, long to, Piece each) {
        int p = piece(from);
        long pos = from;
        while (pos < to) {
            ByteBuffer b = pieces[p];
            int at = (int) (pos - starts[p]);
            int n = (int) Math.min(b.remaining() - at, to - pos);
            if (n > 0) {
                each.accept(b, b.position() + at, n);
                pos += n;
            }
            p++;
        }
    }

    /** Copies the request's bytes {@code [from, to)} to {@code out} (null: nothing). */
    private void copy(long from, long to, ByteArrayOutputStream out) {
        if (from == to || out == null) {
            return;
        }
        pieces(from, to, (b, at, n) -> {
            if (b.hasArray()) {
                out.write(b.array(), b.arrayOffset() + at, n);
            } else {
                byte[] chunk = new byte[n];
                b.get(at, chunk);
                out.write(chunk, 0, n);
            }
        });
    }

    /** The request's bytes {@code [from, from + length)} as segments over the pieces (nothing copied). */
    private List<MemorySegment> segments(long from, long length) {
        List<MemorySegment> out = new ArrayList<>();
        pieces(from, from + length, (b, at, n) -> out.add(MemorySegment.ofBuffer(b.slice(at, n))));
        return out;
    }

    /** The request ends inside a field: not split (the ordinary parser refuses it). */
    private static final class Malformed extends RuntimeException {
        Malformed() {
            super(null, null, false, false);
        }
    }
}
