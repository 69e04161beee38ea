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

    /** @param computeNice added to the helpers' nice value: they run kernels (see {@link ComputeThreadPriority}) */
    WorkerPool(int ordinal, int size, int computeNice) {
        this.size = size;
        AtomicInteger counter = new AtomicInteger();
        this.executor = new ThreadPoolExecutor(size, size, 0, TimeUnit.NANOSECONDS, new LinkedBlockingQueue<>(), r -> {
            Runnable lowered = () -> {
                ComputeThreadPriority.lowerCurrentThread(computeNice);
                r.run();
            };
            Thread t = new Thread(lowered, "arrayd-cpu" + ordinal + "-worker-" + counter.getAndIncrement());
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
