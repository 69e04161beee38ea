package dev.arrayd.benchmarks;

import java.util.concurrent.CompletableFuture;

/**
 * Fires requests back to back with at most {@code window} unanswered: the way a client streams work.
 * Before the {@code window+1}-th request it waits for the oldest, so memory stays bounded and the
 * producer never runs unboundedly ahead of the daemon.
 */
final class Pipeline {

    private Pipeline() {}

    /** Fires {@code count} requests and returns the nanoseconds until the last answer has arrived. */
    static long run(RoundTrip rt, int count, int window) throws Exception {
        CompletableFuture<?>[] ring = new CompletableFuture<?>[window];
        long t0 = System.nanoTime();
        for (int i = 0; i < count; i++) {
            int slot = i % window;
            if (ring[slot] != null) {
                ring[slot].get();
            }
            ring[slot] = rt.fire();
        }
        for (CompletableFuture<?> f : ring) {
            if (f != null) {
                f.get();
            }
        }
        return System.nanoTime() - t0;
    }
}
