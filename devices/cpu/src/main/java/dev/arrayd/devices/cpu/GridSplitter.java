package dev.arrayd.devices.cpu;

/**
 * Cuts a grid into contiguous chunks along its outermost dimension with more than one slice, so that
 * each worker thread runs whole x rows (the vectorized inner loop) and chunks never overlap. For a
 * kernel that runs group by group (local arrays or barriers) the slices are whole work-groups, so a
 * group never spans two chunks; otherwise chunk boundaries ignore work-groups.
 */
final class GridSplitter {

    /** Longs per chunk in the output: lo[3], hi[3]. */
    static final int CHUNK_LONGS = 6;

    private GridSplitter() {}

    /**
     * Writes at most {@code maxParts} chunks covering {@code global} (3 extents, all &gt;= 1) exactly
     * once into {@code out} ({@link #CHUNK_LONGS} longs each) and returns how many it wrote.
     */
    static int split(long[] global, int maxParts, long[] out) {
        return split(global, null, maxParts, out);
    }

    /**
     * As {@link #split(long[], int, long[])}, with chunk boundaries on multiples of {@code unit[d]}
     * (the local size, dividing {@code global[d]}); {@code unit} null means 1.
     */
    static int split(long[] global, long[] unit, int maxParts, long[] out) {
        int dim = 2;
        while (dim > 0 && global[dim] / unitOf(unit, dim) == 1) {
            dim--;
        }
        long u = unitOf(unit, dim);
        long extent = global[dim] / u;
        int parts = (int) Math.max(1, Math.min(maxParts, extent));
        long base = extent / parts;
        long remainder = extent % parts;
        for (int k = 0; k < parts; k++) {
            int at = k * CHUNK_LONGS;
            for (int d = 0; d < 3; d++) {
                out[at + d] = 0;
                out[at + 3 + d] = global[d];
            }
            // the first `remainder` chunks take one extra slice, so sizes differ by at most one
            out[at + dim] = (k * base + Math.min(k, remainder)) * u;
            out[at + 3 + dim] = ((k + 1) * base + Math.min(k + 1, remainder)) * u;
        }
        return parts;
    }

    private static long unitOf(long[] unit, int d) {
        return unit == null ? 1 : unit[d];
    }
}
