package dev.arrayd.devices.cpu;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A device's fixed pool of platform threads that help stream workers run large grids; shared by all
 * the device's streams. Threads are daemons (a stuck kernel must not keep the JVM alive) named
 * {@code arrayd-cpu<N>-worker-<i>}, started on first use.
 */
final class WorkerPool implements Executor, AutoCloseable {

    private final ThreadPoolExecutor executor;
    private final int size;

    WorkerPool(int ordinal, int size) {
        this.size = size;
        AtomicInteger counter = new AtomicInteger();
        this.executor = new ThreadPoolExecutor(size, size, 0, TimeUnit.NANOSECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "arrayd-cpu" + ordinal + "-worker-" + counter.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
    }

    int size() {
        return size;
    }

    @Override
    public void execute(Runnable task) {
        executor.execute(task);
    }

    /** Lets queued tasks finish, then waits for the threads to end their tasks. */
    @Override
    public void close() {
        executor.close();
    }
}
