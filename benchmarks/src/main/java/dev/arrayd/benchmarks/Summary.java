package dev.arrayd.benchmarks;

import java.util.Arrays;

/**
 * Order statistics of one set of samples, in microseconds.
 *
 * <p>Percentiles are nearest-rank on the sorted samples (the smallest sample with at least p% of the
 * samples at or below it): an observed value, never an interpolation between two.
 *
 * @param count   number of samples
 * @param median  50th percentile
 * @param p90     90th percentile
 * @param p99     99th percentile
 * @param mean    arithmetic mean
 * @param min     smallest sample
 * @param max     largest sample
 */
public record Summary(int count, double median, double p90, double p99, double mean, double min, double max) {

    /** Summarizes samples given in nanoseconds. */
    public static Summary ofNanos(long[] nanos) {
        if (nanos.length == 0) {
            throw new IllegalArgumentException("samples: none (expected: at least one)");
        }
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        double sum = 0;
        for (long v : sorted) {
            sum += v;
        }
        return new Summary(sorted.length, us(rank(sorted, 50)), us(rank(sorted, 90)), us(rank(sorted, 99)),
                sum / sorted.length / 1_000.0, us(sorted[0]), us(sorted[sorted.length - 1]));
    }

    /** Nearest-rank percentile of sorted samples. */
    static long rank(long[] sorted, double percent) {
        int r = (int) Math.ceil(percent / 100.0 * sorted.length);
        return sorted[Math.clamp(r - 1, 0, sorted.length - 1)];
    }

    private static double us(long nanos) {
        return nanos / 1_000.0;
    }
}
