package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads of one device that run the extra lanes of {@link ParallelTransfer}s: {@code lanes - 1} of
 * them at most (the stream's worker is lane 0), started on first need and ended after 30 s without work,
 * so a device that moves no large arrays holds none.
 */
final class CopyLanes implements AutoCloseable {

    private final ThreadPoolExecutor pool;

    CopyLanes(String device, int lanes) {
        AtomicInteger n = new AtomicInteger();
        int threads = Math.max(1, lanes - 1);
        this.pool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "arrayd-" + device.replace(':', '-') + "-copy-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        pool.allowCoreThreadTimeOut(true);
    }

    Future<?> submit(Runnable lane) {
        try {
            return pool.submit(lane);
        } catch (RejectedExecutionException e) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, "copy lanes: closed (expected: an open device)", e);
        }
    }

    /** After the device's streams: no transfer runs any more. */
    @Override
    public void close() {
        pool.shutdown();
    }
}
