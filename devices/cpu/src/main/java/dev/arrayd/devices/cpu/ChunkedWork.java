package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.support.StreamWorker;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * One command's work split into chunks. The stream's worker and the helpers it wakes claim chunks from a
 * shared counter until none are left, so the work finishes even when every pool thread is busy with
 * another stream's; a helper that arrives after the last chunk was claimed does nothing. The first
 * failure of a chunk is rethrown to the stream's worker once every chunk has ended.
 */
abstract class ChunkedWork implements Runnable {

    private final int chunks;
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicInteger done = new AtomicInteger();
    private final Thread owner = Thread.currentThread();
    private volatile boolean ownerParked;
    private volatile Throwable failure;

    ChunkedWork(int chunks) {
        this.chunks = chunks;
    }

    /** Runs chunk {@code index} (0 to chunks - 1), on whichever thread claimed it. */
    abstract void chunk(int index) throws Throwable;

    /** On the stream's worker: hands {@code helpers} tasks to the pool, works along, waits for the rest. */
    final void runAndWait(Executor pool, int helpers) throws Throwable {
        try {
            for (int i = 0; i < helpers; i++) {
                pool.execute(this);
            }
        } catch (RejectedExecutionException e) {
            // the device is closing; this thread claims whatever the helpers do not
        }
        work();
        long spinUntil = System.nanoTime() + StreamWorker.DEFAULT_SPIN_NANOS;
        while (done.get() < chunks && System.nanoTime() < spinUntil) {
            Thread.onSpinWait();
        }
        if (done.get() < chunks) {
            ownerParked = true;
            while (done.get() < chunks) {
                LockSupport.park(this);
            }
            ownerParked = false;
        }
        Throwable t = failure;
        if (t != null) {
            throw t;
        }
    }

    @Override
    public final void run() {
        work();
    }

    private void work() {
        for (;;) {
            int c = next.getAndIncrement();
            if (c >= chunks) {
                return;
            }
            try {
                chunk(c);
            } catch (Throwable t) {
                if (failure == null) {
                    failure = t;
                }
            }
            if (done.incrementAndGet() == chunks && ownerParked) {
                LockSupport.unpark(owner);
            }
        }
    }
}
