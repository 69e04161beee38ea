package dev.arrayd.devices.cpu;

/**
 * Cuts a grid into contiguous chunks along its outermost dimension with extent &gt; 1, so that each
 * worker thread runs whole x rows (the vectorized inner loop) and chunks never overlap. Chunk
 * boundaries ignore work-groups: CPU kernels have no barriers, so a group may span two chunks.
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
        int dim = 2;
        while (dim > 0 && global[dim] == 1) {
            dim--;
        }
        long extent = global[dim];
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
            out[at + dim] = k * base + Math.min(k, remainder);
            out[at + 3 + dim] = (k + 1) * base + Math.min(k + 1, remainder);
        }
        return parts;
    }
}
