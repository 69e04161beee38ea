package dev.arrayd.benchmarks;

import java.util.List;
import java.util.TreeSet;

/**
 * A Task Bench dependence pattern (Slaughter et al., "Task Bench: A Parameterized Benchmark for
 * Evaluating Parallel Runtime Performance", SC'20): a grid of {@code timesteps x width} tasks where task
 * {@code (t, x)} depends on some tasks {@code (t-1, y)} of the timestep before. Timestep 0 has none.
 *
 * <p>In arrayd every column {@code x} runs on its own stream, so {@code (t-1, x)} always precedes
 * {@code (t, x)} by stream order; the dependencies listed here are those declared with {@code waitFor}.
 *
 * @param name    as printed and in file names, e.g. {@code stencil_1d}, {@code nearest_3}
 * @param pattern the pattern
 * @param radix   dependencies per task for {@code nearest} and {@code spread}
 */
record TaskGraph(String name, Pattern pattern, int radix) {

    enum Pattern {
        /** {@code x-1, x, x+1}, clipped at the edges. */
        STENCIL_1D,
        /** The {@code radix} columns centred on {@code x}: {@code x-(radix-1)/2 .. x+radix/2}, clipped. */
        NEAREST,
        /**
         * {@code radix} columns spread evenly over the width, starting at {@code x} and shifted by the
         * timestep: {@code (x + t + i * ceil(width/radix)) mod width}, duplicates dropped.
         */
        SPREAD,
        /**
         * Butterfly: {@code x - 2^d} and {@code x + 2^d} where they exist, {@code d = (t-1) mod log2(width)}
         * (0 for a width of 1).
         */
        FFT
    }

    /** The graphs measured, in report order. */
    static List<TaskGraph> standard() {
        return List.of(new TaskGraph("stencil_1d", Pattern.STENCIL_1D, 3),
                new TaskGraph("nearest_0", Pattern.NEAREST, 0),
                new TaskGraph("nearest_1", Pattern.NEAREST, 1),
                new TaskGraph("nearest_3", Pattern.NEAREST, 3),
                new TaskGraph("nearest_5", Pattern.NEAREST, 5),
                new TaskGraph("nearest_9", Pattern.NEAREST, 9),
                new TaskGraph("spread_3", Pattern.SPREAD, 3),
                new TaskGraph("fft", Pattern.FFT, 2));
    }

    /** The columns of timestep {@code t-1} that task {@code (t, x)} depends on, ascending. */
    int[] deps(int t, int x, int width) {
        if (t == 0) {
            return new int[0];
        }
        TreeSet<Integer> d = new TreeSet<>();
        switch (pattern) {
            case STENCIL_1D -> {
                for (int y = x - 1; y <= x + 1; y++) {
                    add(d, y, width);
                }
            }
            case NEAREST -> {
                if (radix > 0) {
                    for (int y = x - (radix - 1) / 2; y <= x + radix / 2; y++) {
                        add(d, y, width);
                    }
                }
            }
            case SPREAD -> {
                int step = Math.max(1, (width + radix - 1) / radix);
                for (int i = 0; i < radix; i++) {
                    d.add(Math.floorMod(x + t + i * step, width));
                }
            }
            case FFT -> {
                int levels = Math.max(1, 31 - Integer.numberOfLeadingZeros(width));
                int stride = 1 << ((t - 1) % levels);
                add(d, x - stride, width);
                add(d, x + stride, width);
            }
        }
        return d.stream().mapToInt(Integer::intValue).toArray();
    }

    private static void add(TreeSet<Integer> d, int y, int width) {
        if (y >= 0 && y < width) {
            d.add(y);
        }
    }
}
