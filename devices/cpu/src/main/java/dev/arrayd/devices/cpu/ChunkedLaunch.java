package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.support.StreamWorker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * One launch split into chunks. The stream's worker and the helpers it wakes claim chunks from a
 * shared counter until none are left, so the launch finishes even when every pool thread is busy
 * with another stream's launch. A helper that arrives after the last chunk was claimed does nothing.
 */
final class ChunkedLaunch implements Runnable {

    private final MethodHandle trampoline;
    private final ArgBlock block;
    private final int chunks;
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicInteger done = new AtomicInteger();
    private final Thread owner = Thread.currentThread();
    private volatile boolean ownerParked;
    private volatile Throwable failure;

    ChunkedLaunch(MethodHandle trampoline, ArgBlock block, int chunks) {
        this.trampoline = trampoline;
        this.block = block;
        this.chunks = chunks;
    }

    /** On the stream's worker: hands {@code helpers} tasks to the pool, works along, waits for the rest. */
    void runAndWait(Executor pool, int helpers) throws Throwable {
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
    public void run() {
        work();
    }

    private void work() {
        for (;;) {
            int chunk = next.getAndIncrement();
            if (chunk >= chunks) {
                return;
            }
            try {
                MemorySegment range = block.range(chunk);
                trampoline.invokeExact(range, block.args());
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
