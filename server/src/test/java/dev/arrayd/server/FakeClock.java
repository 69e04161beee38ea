package dev.arrayd.server;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** A clock tests move by hand (Kafka's MockTime): leases and reloads without sleeping. */
final class FakeClock implements Clock {

    private final AtomicLong now = new AtomicLong(1_000_000_000L);

    @Override
    public long nanoTime() {
        return now.get();
    }

    void advance(long amount, TimeUnit unit) {
        now.addAndGet(unit.toNanos(amount));
    }
}
