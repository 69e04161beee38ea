package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.server.auth.Quotas;
import dev.arrayd.server.auth.Tenant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What one tenant holds now, against its {@link Quotas}. Every counter is an atomic updated with a
 * compare-and-set loop (reserve) or an add (release): no lock on the command path. Created and
 * destroyed objects, session closes, submissions and completions keep it exact.
 */
final class TenantUsage {

    private static final long MINUTE_NANOS = TimeUnit.MINUTES.toNanos(1);

    private volatile Tenant tenant;
    final AtomicLong memoryBytes = new AtomicLong();
    final AtomicLong inFlight = new AtomicLong();
    final AtomicLong streams = new AtomicLong();
    private final Clock clock;
    // compile time: a fixed one-minute window (compiles are slow and rare; a lock is fine)
    private long windowStartNanos;
    private long compileNanosInWindow;

    TenantUsage(Tenant tenant, Clock clock) {
        this.tenant = tenant;
        this.clock = clock;
        this.windowStartNanos = clock.nanoTime();
    }

    Tenant tenant() {
        return tenant;
    }

    /** A reloaded token file may change the quotas of a tenant that already holds things. */
    void update(Tenant t) {
        if (!t.equals(tenant)) {
            tenant = t;
        }
    }

    void reserveMemory(long bytes) {
        reserve(memoryBytes, bytes, tenant.quotas().memoryBytes(), "device memory", "bytes");
    }

    /** Commands submitted and not finished, and streaming calls in progress, count against one quota. */
    void reserveInFlight(long commands) {
        reserve(inFlight, commands, tenant.quotas().inFlightCommands(), "in-flight commands", "commands");
    }

    /**
     * A WriteBuffer or ReadBuffer call in progress counts as one in-flight command from its first message
     * until it has answered and its commands have finished: a client cannot get past the quota by moving
     * its work into streaming calls.
     */
    void reserveInFlightCall(String call) {
        long limit = tenant.quotas().inFlightCommands();
        if (limit == Quotas.UNLIMITED) {
            inFlight.incrementAndGet();
            return;
        }
        long now;
        do {
            now = inFlight.get();
            if (now + 1 > limit) {
                throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, "tenant " + tenant.name() + ": in-flight commands "
                        + "quota " + limit + " commands exceeded by this " + call + " call (in use " + now
                        + ": commands not finished and WriteBuffer / ReadBuffer calls in progress, one each)");
            }
        } while (!inFlight.compareAndSet(now, now + 1));
    }

    void reserveStream() {
        reserve(streams, 1, tenant.quotas().streams(), "streams", "streams");
    }

    /** Refuses a compilation while this minute's compile time is used up. */
    synchronized void checkCompile() {
        long limit = tenant.quotas().compileMillisPerMinute();
        if (limit == Quotas.UNLIMITED) {
            return;
        }
        rollWindow();
        long usedMillis = compileNanosInWindow / 1_000_000;
        if (usedMillis >= limit) {
            throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, "tenant " + tenant.name() + ": compile time quota "
                    + limit / 1000.0 + " seconds per minute exceeded (used " + usedMillis / 1000.0
                    + " s in this minute; retry after it)");
        }
    }

    synchronized void compiled(long nanos) {
        rollWindow();
        compileNanosInWindow += nanos;
    }

    private void rollWindow() {
        long now = clock.nanoTime();
        if (now - windowStartNanos >= MINUTE_NANOS) {
            windowStartNanos = now;
            compileNanosInWindow = 0;
        }
    }

    private void reserve(AtomicLong counter, long n, long limit, String quota, String unit) {
        if (limit == Quotas.UNLIMITED) {
            counter.addAndGet(n);
            return;
        }
        long now;
        do {
            now = counter.get();
            if (now + n > limit || now + n < 0) {
                throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, "tenant " + tenant.name() + ": " + quota
                        + " quota " + limit + " " + unit + " exceeded (in use " + now + ", requested " + n + ")");
            }
        } while (!counter.compareAndSet(now, now + n));
    }
}
