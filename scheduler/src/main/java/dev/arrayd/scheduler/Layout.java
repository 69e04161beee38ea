package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Quote;
import java.util.Arrays;

/**
 * How a buffer's elements lie in its memory (the seed's pre-padded tensor nodes): its dims, outermost
 * first, and per axis a padding before ({@code left}) and after ({@code right}) them. Memory holds the
 * padded array, row-major: {@code storageDims[i] = left[i] + dims[i] + right[i]}. The elements of
 * {@code dims} are the <em>interior</em>; a dense buffer is a layout with no padding, whose interior is all
 * of it.
 *
 * <p>The interior is not contiguous once an axis is padded: it is a sequence of <em>runs</em>, each the
 * whole extent of the innermost padded axis and of every axis inside it (those have no padding, so they are
 * contiguous). A range of interior elements, in row-major order, is a sequence of {@link Piece}s, at most
 * one per run, computed on demand ({@link #piece}).
 */
public record Layout(long[] dims, long[] left, long[] right) {

    /** A piece of a range: {@code length} elements at {@code storage} in memory, {@code logical} in the range's order. */
    record Piece(long storage, long logical, long length) {}

    public Layout {
        dims = dims.clone();
        left = left.clone();
        right = right.clone();
    }

    @Override
    public long[] dims() {
        return dims.clone();
    }

    /** Padding before the interior, per axis. */
    @Override
    public long[] left() {
        return left.clone();
    }

    /** Padding after the interior, per axis. */
    @Override
    public long[] right() {
        return right.clone();
    }

    static Layout dense(long[] dims) {
        return new Layout(dims, new long[dims.length], new long[dims.length]);
    }

    /**
     * The layout of {@code dims} with {@code left} / {@code right} padding, checked: one pair per axis, none
     * negative, the padded element count at most {@code maxElements}.
     */
    public static Layout padded(long[] dims, long[] left, long[] right, long maxElements) {
        if (left.length != dims.length || right.length != dims.length) {
            throw ArraydException.invalid("padding: " + Math.max(left.length, right.length) + " axes (expected: "
                    + dims.length + ", one (left, right) pair per axis of dims " + Quote.longs(dims) + ")");
        }
        long n = 1;
        for (int i = 0; i < dims.length; i++) {
            if (left[i] < 0 || right[i] < 0) {
                throw ArraydException.invalid("padding[" + i + "]: (" + left[i] + ", " + right[i] + ") (expected: >= 0 "
                        + "on both sides)");
            }
            long extent = dims[i] + left[i] + right[i];
            if (extent < 0 || left[i] > maxElements || right[i] > maxElements) {
                throw ArraydException.invalid("padding[" + i + "]: (" + left[i] + ", " + right[i] + ") (expected: a "
                        + "padded extent that fits, at most " + maxElements + " elements in all)");
            }
            n = dev.arrayd.devices.api.support.Saturating.multiply(n, extent);
        }
        if (n > maxElements) {
            throw ArraydException.invalid("padding: " + n + " padded elements (expected: at most " + maxElements + ")");
        }
        return new Layout(dims, left, right);
    }

    public boolean isPadded() {
        for (int i = 0; i < dims.length; i++) {
            if (left[i] != 0 || right[i] != 0) {
                return true;
            }
        }
        return false;
    }

    public int rank() {
        return dims.length;
    }

    /** The padded extents: the array memory holds. */
    public long[] storageDims() {
        long[] s = new long[dims.length];
        for (int i = 0; i < dims.length; i++) {
            s[i] = left[i] + dims[i] + right[i];
        }
        return s;
    }

    /** Elements of the interior. */
    public long elements() {
        long n = 1;
        for (long d : dims) {
            n *= d;
        }
        return n;
    }

    /** Elements of the padded array. */
    public long storageElements() {
        long n = 1;
        for (long d : storageDims()) {
            n *= d;
        }
        return n;
    }

    /** The innermost padded axis, or -1 when none is: its runs and everything inside it are contiguous. */
    private int innermostPadded() {
        for (int i = dims.length - 1; i >= 0; i--) {
            if (left[i] != 0 || right[i] != 0) {
                return i;
            }
        }
        return -1;
    }

    /** Interior elements per run (all of them when nothing is padded). */
    long runLength() {
        int k = innermostPadded();
        long r = 1;
        for (int i = Math.max(k, 0); i < dims.length; i++) {
            r *= dims[i];
        }
        return r;
    }

    /** Where interior run {@code run} starts in the padded array (elements). */
    long runStart(long run) {
        int k = innermostPadded();
        if (k < 0) {
            return 0;
        }
        long[] sd = storageDims();
        long stride = 1;
        for (int i = dims.length - 1; i > k; i--) {
            stride *= sd[i];
        }
        long at = left[k] * stride;
        stride *= sd[k];
        for (int i = k - 1; i >= 0; i--) {
            long idx = run % dims[i];
            run /= dims[i];
            at += (idx + left[i]) * stride;
            stride *= sd[i];
        }
        return at;
    }

    /** How many pieces interior elements {@code [first, first + count)} have (0 when count is 0). */
    long pieces(long first, long count) {
        if (count == 0) {
            return 0;
        }
        long r = runLength();
        return (first + count - 1) / r - first / r + 1;
    }

    /** Piece {@code i} of interior elements {@code [first, first + count)}. */
    Piece piece(long first, long count, long i) {
        long r = runLength();
        long run = first / r + i;
        long lo = Math.max(first, run * r);
        long hi = Math.min(first + count, (run + 1) * r);
        return new Piece(runStart(run) + (lo - run * r), lo - first, hi - lo);
    }

    /** {@code [2, 3]} with padding {@code (1, 1), (0, 2)}: {@code [2, 3] pad [(1,1), (0,2)]}; the dims alone when dense. */
    @Override
    public String toString() {
        if (!isPadded()) {
            return Quote.longs(dims);
        }
        StringBuilder sb = new StringBuilder(Quote.longs(dims)).append(" pad [");
        for (int i = 0; i < dims.length; i++) {
            sb.append(i == 0 ? "" : ", ").append('(').append(left[i]).append(',').append(right[i]).append(')');
        }
        return sb.append(']').toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Layout l && Arrays.equals(dims, l.dims) && Arrays.equals(left, l.left)
                && Arrays.equals(right, l.right);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(dims) * 31 + Arrays.hashCode(left) * 7 + Arrays.hashCode(right);
    }
}
