package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.support.LaunchGrid;


/**
 * Grid and block of a launch, from arrayd's global / local dims (OpenCL's model: global counts
 * work-items, not blocks). Pure, so it is tested without a GPU.
 *
 * <p>With local dims, each must divide its global dim (a CUDA grid has whole blocks only, and arrayd
 * never runs work-items beyond the global size). Without them the block is chosen per dimension, x
 * first, as the largest divisor of the global dim that fits the remaining thread budget
 * ({@code defaultBlockSize} threads, and the device's per-dimension limits): 2^20 items run as 4096
 * blocks of 256, 1000 as 4 of 250, a prime as blocks of 1. A global size with a large power-of-two
 * factor launches best; callers who care pass local dims.
 */
record LaunchGeometry(int gridX, int gridY, int gridZ, int blockX, int blockY, int blockZ) {

    /** Device limits a launch is checked against. */
    record Limits(int maxThreadsPerBlock, int[] maxBlockDims, long[] maxGridDims) {}

    static LaunchGeometry of(long[] global, long[] local, int defaultBlockSize, Limits limits) {
        long[] maxLocal = new long[3];
        for (int d = 0; d < 3; d++) {
            maxLocal[d] = limits.maxBlockDims()[d];
        }
        LaunchGrid.check(global, local, new LaunchGrid.Limits(3, maxLocal, limits.maxThreadsPerBlock(), ""),
                Long.MAX_VALUE, LaunchGrid.Names.SPI);
        if (local != null && local.length == 0) {
            local = null;
        }
        long[] g = {1, 1, 1};
        long[] b = {1, 1, 1};
        for (int d = 0; d < global.length; d++) {
            g[d] = global[d];
        }
        if (local != null) {
            for (int d = 0; d < local.length; d++) {
                b[d] = local[d];
            }
        } else {
            long budget = Math.min(defaultBlockSize, limits.maxThreadsPerBlock());
            for (int d = 0; d < 3; d++) {
                b[d] = largestDivisorAtMost(g[d], Math.min(budget, limits.maxBlockDims()[d]));
                budget /= b[d];
            }
        }
        long[] grid = new long[3];
        for (int d = 0; d < 3; d++) {
            grid[d] = g[d] / b[d];
            if (grid[d] > limits.maxGridDims()[d]) {
                throw ArraydException.invalid("globalDims[" + d + "]: " + g[d] + " (expected: at most "
                        + limits.maxGridDims()[d] + " blocks of " + b[d] + " in that dimension on this device)");
            }
        }
        return new LaunchGeometry((int) grid[0], (int) grid[1], (int) grid[2], (int) b[0], (int) b[1], (int) b[2]);
    }

    /** The largest divisor of {@code n} that is at most {@code max} (at least 1). */
    static long largestDivisorAtMost(long n, long max) {
        if (max <= 1) {
            return 1;
        }
        if (n <= max) {
            return n;
        }
        for (long d = max; d > 1; d--) {
            if (n % d == 0) {
                return d;
            }
        }
        return 1;
    }

    long threadsPerBlock() {
        return (long) blockX * blockY * blockZ;
    }
}
