package dev.arrayd.client;

import java.util.Arrays;
import java.util.Objects;

/**
 * The padding of a padded buffer (the seed's pre-padded tensor nodes): per axis, elements before
 * ({@code left}) and after ({@code right}) its dims, and the value they hold. The daemon keeps the padded
 * array in memory, fills the padding with {@code value} and keeps it there; kernels index the padded array,
 * while writes, reads, fills and copies address the interior (row-major over the buffer's dims) unless their
 * {@link CommandOptions#wholePadded()} says otherwise.
 *
 * @param left  padding before each axis, outermost first; none negative
 * @param right padding after each axis
 * @param value the padding's value, of the buffer's dtype (a float for f16 / bf16); null = zero
 */
public record Padding(long[] left, long[] right, Number value) {

    public Padding {
        Objects.requireNonNull(left, "left");
        Objects.requireNonNull(right, "right");
        if (left.length != right.length) {
            throw new IllegalArgumentException("left and right: " + left.length + " and " + right.length
                    + " axes (expected: the same count)");
        }
        for (int i = 0; i < left.length; i++) {
            if (left[i] < 0 || right[i] < 0) {
                throw new IllegalArgumentException("padding of axis " + i + ": (" + left[i] + ", " + right[i]
                        + ") (expected: >= 0 on both sides)");
            }
        }
        left = left.clone();
        right = right.clone();
    }

    /** {@code halo} elements on both sides of each of {@code rank} axes, holding {@code value}. */
    public static Padding halo(int rank, long halo, Number value) {
        long[] p = new long[rank];
        Arrays.fill(p, halo);
        return new Padding(p, p, value);
    }

    @Override
    public long[] left() {
        return left.clone();
    }

    @Override
    public long[] right() {
        return right.clone();
    }

    /** The padded extents of {@code dims}. */
    public long[] paddedDims(long[] dims) {
        long[] out = new long[dims.length];
        for (int i = 0; i < dims.length; i++) {
            out[i] = left[i] + dims[i] + right[i];
        }
        return out;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Padding p && Arrays.equals(left, p.left) && Arrays.equals(right, p.right)
                && Objects.equals(value, p.value);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(left) * 31 + Arrays.hashCode(right);
    }

    @Override
    public String toString() {
        return "Padding" + Arrays.toString(left) + Arrays.toString(right) + (value == null ? "" : " = " + value);
    }
}
