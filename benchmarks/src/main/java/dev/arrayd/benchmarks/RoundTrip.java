package dev.arrayd.benchmarks;

import java.util.concurrent.CompletableFuture;

/** One kind of request whose round trip a scenario times: send one, get the future of its answer. */
@FunctionalInterface
interface RoundTrip {

    /** Sends one request; the future completes when its answer has arrived (on a transport thread). */
    CompletableFuture<?> fire();
}
