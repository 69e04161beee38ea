package dev.arrayd.benchmarks;

import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * What this machine charges for one hand-off between threads: a thread busy for a while unparks another
 * that is parked (the scheduler puts it on an idle core when there is one), and the woken thread notes how
 * long after the unpark it ran. Every hand-off between the daemon's threads pays this once.
 */
final class WakeLatency {

    /** Percentiles of the measured wake-ups, µs. */
    record Result(double p10Micros, double p50Micros, double p90Micros, double p99Micros, int wakeUps) {}

    private volatile long stamp;
    private volatile int turn;

    private WakeLatency() {}

    /** {@code n} wake-ups, each after the waker was busy for {@code busyNanos} (so the other thread has parked). */
    static Result measure(int n, long busyNanos) throws InterruptedException {
        if (n <= 0) {
            throw new IllegalArgumentException("n: " + n + " (expected: > 0)");
        }
        WakeLatency w = new WakeLatency();
        long[] lat = new long[n];
        Thread waker = Thread.currentThread();
        Thread sleeper = Thread.ofPlatform().name("bench-wake-latency").start(() -> {
            for (int i = 0; i < n; i++) {
                while (w.turn != 1) {
                    LockSupport.park(w);
                }
                lat[i] = System.nanoTime() - w.stamp;
                w.turn = 0;
                LockSupport.unpark(waker);
            }
        });
        for (int i = 0; i < n; i++) {
            long until = System.nanoTime() + busyNanos;
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            w.stamp = System.nanoTime();
            w.turn = 1;
            LockSupport.unpark(sleeper);
            while (w.turn != 0) {
                LockSupport.park(w);
            }
        }
        sleeper.join();
        Arrays.sort(lat);
        return new Result(lat[n / 10] / 1e3, lat[n / 2] / 1e3, lat[n * 9 / 10] / 1e3, lat[Math.min(n - 1, n * 99 / 100)] / 1e3, n);
    }
}
