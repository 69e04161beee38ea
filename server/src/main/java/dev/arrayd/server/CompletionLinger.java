package dev.arrayd.server;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one timer of the session streams that let completions linger ({@code Attach.completion_linger_us}):
 * it sends what a stream held back once the stream's linger is over. One thread for the daemon, started
 * on the first linger; a stream arms it at most once per linger, not once per completion.
 */
final class CompletionLinger implements AutoCloseable {

    /** The longest linger a stream may ask for. */
    static final long MAX_MICROS = 10_000;

    private ScheduledThreadPoolExecutor timer;
    private boolean closed;

    /**
     * Runs {@code send} after {@code nanos}; at once, on this thread, when the daemon is closing (the stream
     * is about to end anyway and must not keep what it held back).
     */
    void after(long nanos, Runnable send) {
        ScheduledThreadPoolExecutor t = timer();
        if (t != null) {
            try {
                t.schedule(send, nanos, TimeUnit.NANOSECONDS);
                return;
            } catch (RejectedExecutionException closing) {
                // fall through: send now
            }
        }
        send.run();
    }

    private synchronized ScheduledThreadPoolExecutor timer() {
        if (timer == null && !closed) {
            timer = new ScheduledThreadPoolExecutor(1, r -> {
                Thread th = new Thread(r, "arrayd-completion-linger");
                th.setDaemon(true);
                return th;
            });
            timer.setRemoveOnCancelPolicy(true);
        }
        return timer;
    }

    /** Runs what is armed now (nothing is held back past the daemon's end), then stops the thread. */
    @Override
    public void close() {
        ScheduledThreadPoolExecutor t;
        synchronized (this) {
            closed = true;
            t = timer;
        }
        if (t != null) {
            for (Runnable r : t.shutdownNow()) {
                r.run();
            }
        }
    }
}
