package dev.arrayd.server.metrics;

import java.util.function.LongSupplier;

/**
 * The fraction of recent wall time a device was busy, from its growing busy-time counter: over the
 * window between the reading kept at least {@link #MIN_WINDOW_NANOS} ago and now (5 to 10 s when
 * scraped often; the time since the previous scrape when scraped less often). In [0, 1].
 */
final class BusyWindow {

    static final long MIN_WINDOW_NANOS = 5_000_000_000L;

    private final LongSupplier busyNanos;
    private final LongSupplier clock;
    private long olderAt;
    private long olderBusy;
    private long newerAt;
    private long newerBusy;

    BusyWindow(LongSupplier busyNanos, LongSupplier clock) {
        this.busyNanos = busyNanos;
        this.clock = clock;
        this.olderAt = this.newerAt = clock.getAsLong();
        this.olderBusy = this.newerBusy = busyNanos.getAsLong();
    }

    synchronized double fraction() {
        long now = clock.getAsLong();
        long busy = busyNanos.getAsLong();
        if (now - newerAt >= MIN_WINDOW_NANOS) {
            olderAt = newerAt;
            olderBusy = newerBusy;
            newerAt = now;
            newerBusy = busy;
        }
        long wall = now - olderAt;
        if (wall <= 0) {
            return 0;
        }
        return Math.clamp((double) (busy - olderBusy) / wall, 0.0, 1.0);
    }
}
