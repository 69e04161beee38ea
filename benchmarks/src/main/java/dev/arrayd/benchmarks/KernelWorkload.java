package dev.arrayd.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * One kernel of {@code bench kernels} with its data: the buffers (initial contents), the launches
 * that make one run (one pass, or two for the sum), which buffer holds the answer, the answer computed
 * here in Java, and the work a run does (bytes moved at least once, FLOPs) from which a rate is derived.
 * Every column runs exactly these launches on exactly these inputs.
 *
 * @param name      the kernel's name in tables and the {@code RESULT} line
 * @param what      one line saying what it computes, at which size
 * @param buffers   initial contents of every buffer (f32); an output's contents are zeros
 * @param passes    the launches of one run, in order
 * @param output    index of the buffer checked against {@code expected}
 * @param expected  the answer
 * @param tolerance allowed |got - expected| relative to max(|expected|, 1)
 * @param bytes     bytes a run must read and write at least once
 * @param flops     floating-point operations of a run
 * @param computeBound whether its rate is quoted in GFLOP/s (otherwise GB/s)
 */
record KernelWorkload(String name, String what, List<float[]> buffers, List<Pass> passes, int output,
                      float[] expected, double tolerance, double bytes, double flops, boolean computeBound) {

    /** One launch: an entry point, its grid, its arguments ({@link Buf}, {@link Float}, {@link Integer}). */
    record Pass(String entry, long[] global, List<Object> args) {}

    /** A buffer argument: an index into {@link #buffers()}. */
    record Buf(int index) {}

    /** The problem sizes; {@link #FULL} for real runs, {@link #SMALL} for tests. */
    record Sizes(int n, int chunk, int matmul, int softmaxRows, int softmaxCols) {}

    /** 4 Mi floats (16 MiB per vector), a 512 x 512 matmul, softmax over 16 Ki rows of 256. */
    static final Sizes FULL = new Sizes(1 << 22, 256, 512, 1 << 14, 256);
    static final Sizes SMALL = new Sizes(1 << 14, 64, 32, 256, 64);

    /** The rate the kernel is quoted in, from one run's nanoseconds. */
    double rate(double nanos) {
        return (computeBound ? flops : bytes) / nanos;
    }

    String unit() {
        return computeBound ? "GFLOP/s" : "GB/s";
    }

    /** Index of the first element that differs from {@code expected} beyond the tolerance, or -1. */
    int firstMismatch(float[] got) {
        if (got.length < expected.length) {
            return got.length;
        }
        for (int i = 0; i < expected.length; i++) {
            if (!(Math.abs(got[i] - expected[i]) <= tolerance * Math.max(Math.abs(expected[i]), 1.0))) {
                return i;
            }
        }
        return -1;
    }

    /** vadd, saxpy, sum, matmul and softmax at {@code s}, inputs drawn from {@code seed}. */
    static List<KernelWorkload> all(Sizes s, long seed) {
        Random rnd = new Random(seed);
        List<KernelWorkload> all = new ArrayList<>();
        int n = s.n();

        float[] a = uniform(rnd, n, 0, 1);
        float[] b = uniform(rnd, n, 0, 1);
        float[] sum = new float[n];
        for (int i = 0; i < n; i++) {
            sum[i] = a[i] + b[i];
        }
        all.add(new KernelWorkload("vadd", String.format(Locale.ROOT, "c = a + b, %,d f32", n), List.of(a, b, new float[n]),
                List.of(new Pass("vadd", new long[] {n}, List.of(new Buf(0), new Buf(1), new Buf(2), n))), 2, sum,
                1e-6, 12.0 * n, n, false));

        float alpha = 2.5f;
        float[] y = uniform(rnd, n, 0, 1);
        float[] axpy = new float[n];
        for (int i = 0; i < n; i++) {
            axpy[i] = alpha * a[i] + y[i];
        }
        all.add(new KernelWorkload("saxpy", String.format(Locale.ROOT, "y = %.1f x + y in place, %,d f32", alpha, n),
                List.of(a, y), List.of(new Pass("saxpy", new long[] {n}, List.of(alpha, new Buf(0), new Buf(1), n))),
                1, axpy, 1e-6, 12.0 * n, 2.0 * n, false));

        int parts = (n + s.chunk() - 1) / s.chunk();
        double total = 0;
        for (float v : a) {
            total += v;
        }
        all.add(new KernelWorkload("sum", String.format(Locale.ROOT, "sum of %,d f32, two passes: %,d partial sums of %d, then one "
                        + "work-item", n, parts, s.chunk()), List.of(a, new float[parts], new float[1]),
                List.of(new Pass("sum_partial", new long[] {parts}, List.of(new Buf(0), new Buf(1), n, s.chunk())),
                        new Pass("sum_final", new long[] {1}, List.of(new Buf(1), new Buf(2), parts))),
                2, new float[] {(float) total}, 1e-4, 4.0 * n + 8.0 * parts + 4, n, false));

        int m = s.matmul();
        float[] ma = uniform(rnd, m * m, -1, 1);
        float[] mb = uniform(rnd, m * m, -1, 1);
        all.add(new KernelWorkload("matmul", String.format(Locale.ROOT, "C = A B, %d x %d f32, %d x %d register tiles per work-item",
                m, m, BenchKernels.TILE_M, BenchKernels.TILE_N), List.of(ma, mb, new float[m * m]),
                List.of(new Pass("matmul", new long[] {m / BenchKernels.TILE_N, m / BenchKernels.TILE_M},
                        List.of(new Buf(0), new Buf(1), new Buf(2), m, m, m))),
                2, matmul(ma, mb, m), 1e-4, 12.0 * m * m, 2.0 * m * m * m, true));

        int rows = s.softmaxRows();
        int cols = s.softmaxCols();
        float[] x = uniform(rnd, rows * cols, -4, 4);
        all.add(new KernelWorkload("softmax", String.format(Locale.ROOT, "row softmax, %,d rows of %d f32, one work-item per row",
                rows, cols), List.of(x, new float[rows * cols]),
                List.of(new Pass("softmax", new long[] {rows}, List.of(new Buf(0), new Buf(1), rows, cols))),
                1, softmax(x, rows, cols), 1e-4, 8.0 * rows * cols, 5.0 * rows * cols, false));
        return all;
    }

    private static float[] uniform(Random rnd, int n, float lo, float hi) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = lo + (hi - lo) * rnd.nextFloat();
        }
        return v;
    }

    /** In double, so the reference is closer to the truth than any f32 column. */
    private static float[] matmul(float[] a, float[] b, int m) {
        float[] c = new float[m * m];
        double[] row = new double[m];
        for (int i = 0; i < m; i++) {
            java.util.Arrays.fill(row, 0);
            for (int p = 0; p < m; p++) {
                double av = a[i * m + p];
                for (int j = 0; j < m; j++) {
                    row[j] += av * b[p * m + j];
                }
            }
            for (int j = 0; j < m; j++) {
                c[i * m + j] = (float) row[j];
            }
        }
        return c;
    }

    private static float[] softmax(float[] x, int rows, int cols) {
        float[] y = new float[rows * cols];
        for (int r = 0; r < rows; r++) {
            double mx = Double.NEGATIVE_INFINITY;
            for (int j = 0; j < cols; j++) {
                mx = Math.max(mx, x[r * cols + j]);
            }
            double s = 0;
            for (int j = 0; j < cols; j++) {
                s += Math.exp(x[r * cols + j] - mx);
            }
            for (int j = 0; j < cols; j++) {
                y[r * cols + j] = (float) (Math.exp(x[r * cols + j] - mx) / s);
            }
        }
        return y;
    }
}
