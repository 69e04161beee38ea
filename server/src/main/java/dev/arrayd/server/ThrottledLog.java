package dev.arrayd.server;

import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * A warning that a client can provoke at will (a request that does not parse, a refused header), written at
 * most once per interval: the daemon's log grows by a bounded number of lines whatever a hostile client sends.
 * The line after a quiet interval says how many were left out.
 */
final class ThrottledLog {

    private final Logger log;
    private final long intervalNanos;
    private final AtomicLong nextNanos = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong suppressed = new AtomicLong();

    ThrottledLog(Logger log, long intervalNanos) {
        this.log = log;
        this.intervalNanos = intervalNanos;
    }

    /** Logs {@code message} (one line, no stack trace) unless a line was logged within the interval. */
    void warn(String message) {
        long now = System.nanoTime();
        long next = nextNanos.get();
        if (next != Long.MIN_VALUE && now - next < 0 || !nextNanos.compareAndSet(next, now + intervalNanos)) {
            suppressed.incrementAndGet();
            return;
        }
        long left = suppressed.getAndSet(0);
        log.warn(left == 0 ? message : message + " (" + left + " more like it not logged)");
    }
}
