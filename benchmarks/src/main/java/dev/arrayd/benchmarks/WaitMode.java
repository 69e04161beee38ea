package dev.arrayd.benchmarks;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * How the benchmark thread waits for a round trip's future. Both methods of a comparison use the same
 * mode, so whatever the waiting itself costs is paid equally by both.
 */
public enum WaitMode {
    /**
     * {@code future.get()}: the thread parks and the gRPC transport thread that completes the future
     * unparks it. This is what a client does, so it is the default; the wake-up (a futex call on each
     * side, tens of µs on a VM) is part of every sample of both methods.
     */
    GET {
        @Override
        void await(CompletableFuture<?> f) throws ExecutionException, InterruptedException {
            f.get();
        }
    },
    /**
     * Busy-polls {@code isDone()}: no park / unpark, so the samples show the path itself. Burns a core,
     * which on a small machine competes with the transport and device threads.
     */
    SPIN {
        @Override
        void await(CompletableFuture<?> f) throws ExecutionException, InterruptedException {
            while (!f.isDone()) {
                Thread.onSpinWait();
            }
            f.get();
        }
    };

    /** Returns when {@code f} has completed; throws if it failed. */
    abstract void await(CompletableFuture<?> f) throws ExecutionException, InterruptedException;
}
