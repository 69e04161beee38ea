package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Quote;
import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.scheduler.Session;
import dev.arrayd.server.auth.AuthInterceptor;
import dev.arrayd.server.auth.Tenant;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sessions by token, with their tenants and leases. Every session-scoped call looks its session up
 * here: a token of another tenant's session is NOT_FOUND with exactly the message of a token that
 * never existed (no hint that it does), and a successful lookup renews the lease.
 *
 * <p>{@link #reapExpired()} closes the sessions whose lease ran out (the daemon calls it a few times
 * a second; tests call it after advancing a fake clock): their pending commands are cancelled, the
 * scheduler frees their buffers, kernels and streams, and their tenant gets its quota back.
 */
final class SessionRegistry {

    private static final Logger log = LoggerFactory.getLogger(SessionRegistry.class);

    private final Scheduler scheduler;
    private final Clock clock;
    private final dev.arrayd.server.regions.RegionBroker regions; // null without a Unix socket
    private final Map<String, SessionLease> byToken = new ConcurrentHashMap<>();
    private final Map<String, TenantUsage> tenants = new ConcurrentHashMap<>();
    private final Counter reclaimed;

    SessionRegistry(Scheduler scheduler, Clock clock, MeterRegistry meters,
            dev.arrayd.server.regions.RegionBroker regions) {
        this.scheduler = scheduler;
        this.regions = regions;
        this.clock = clock;
        this.reclaimed = Counter.builder("arrayd.sessions.reclaimed")
                .description("Sessions closed because their lease ran out (the client stopped renewing it)")
                .register(meters);
    }

    Clock clock() {
        return clock;
    }

    /** The usage of the current call's tenant (created on first use; quotas refreshed from the call). */
    TenantUsage usage() {
        return usage(AuthInterceptor.current());
    }

    TenantUsage usage(Tenant t) {
        TenantUsage u = tenants.computeIfAbsent(t.name(), n -> new TenantUsage(t, clock));
        u.update(t);
        return u;
    }

    /** Usage of a tenant by name, or null (tests, stats). */
    TenantUsage usageOf(String tenant) {
        return tenants.get(tenant);
    }

    SessionLease open(String clientName, long leaseMillis, long receiveBytes) {
        TenantUsage u = usage();
        Session s = scheduler.openSession(clientName, leaseMillis);
        s.setTenant(u.tenant().name(), u.tenant().weight()); // the scheduler's fair share charges the tenant
        // the per-stream instances the scheduler makes count against the tenant's memory quota too
        s.setMemoryCharge(new dev.arrayd.scheduler.MemoryCharge() {
            @Override
            public void reserve(long bytes) {
                u.reserveMemory(bytes);
            }

            @Override
            public void release(long bytes) {
                u.memoryBytes.addAndGet(-bytes);
            }
        });
        SessionLease lease = new SessionLease(s, u, TimeUnit.MILLISECONDS.toNanos(leaseMillis), receiveBytes,
                clock.nanoTime());
        byToken.put(s.token(), lease);
        // however the session ends (CloseSession, lease, shutdown), its tenant gets its quota back
        s.onClose(() -> closed(lease));
        return lease;
    }

    /**
     * The current tenant's session with this token, renewed; NOT_FOUND otherwise — UNAVAILABLE while the
     * daemon shuts down, whose end closes every session (a client caught by it learns why).
     */
    SessionLease lease(String token) {
        return lease(token, AuthInterceptor.current().name());
    }

    /** As {@link #lease(String)}, for a caller outside a gRPC call that knows its tenant (the bulk port). */
    SessionLease lease(String token, String tenant) {
        SessionLease l = token == null ? null : byToken.get(token);
        if (l == null || l.closed || !l.tenantName().equals(tenant)) {
            if (scheduler.isShuttingDown()) {
                throw Scheduler.shuttingDown();
            }
            throw notFound(token);
        }
        l.renewedNanos = clock.nanoTime();
        return l;
    }

    /**
     * Holds the lease of the current tenant's open session with this token while a call naming it runs (see
     * {@link CallLeaseHold}); null when there is no such session (the call's handler answers that).
     */
    SessionLease hold(String token) {
        SessionLease l = byToken.get(token);
        if (l == null || l.closed || !l.tenantName().equals(AuthInterceptor.current().name())) {
            return null;
        }
        l.activeCalls.incrementAndGet();
        l.renewedNanos = clock.nanoTime();
        return l;
    }

    /** The end of a call that held {@code l}: the lease is renewed from now. */
    void release(SessionLease l) {
        l.renewedNanos = clock.nanoTime();
        l.activeCalls.decrementAndGet();
    }

    /** The lease of the session with this token, whoever's it is, not renewed; null if none (tests). */
    SessionLease find(String token) {
        return byToken.get(token);
    }

    Session session(String token) {
        return lease(token).session;
    }

    /** The same message as the scheduler's for an unknown token. */
    static ArraydException notFound(String token) {
        String shown = token == null || token.isEmpty() ? "(empty)"
                : Quote.string(token.length() > 8 ? token.substring(0, 8) : token) + (token.length() > 8 ? "…" : "");
        return ArraydException.notFound("session: " + shown + " (not found or closed)");
    }

    /** CloseSession: closes the session and cancels what it still has pending (see {@link #closeAndCancel}). */
    void close(SessionLease l) {
        closeAndCancel(l, new ArraydException(ErrorCode.CANCELLED, "cancelled: " + l.session
                + " was closed (CloseSession) before this command finished"));
    }

    /**
     * Closes a session, then cancels its pending commands with {@code cause}: queued ones leave their
     * device queue and never run, those waiting for dependencies never run, running ones finish on the
     * device and their results are dropped. Their events fail with the cause, so the session's stream
     * reports them and then ends. Nobody is left to want their results, and a departed client's work
     * no longer takes device time from the others. Returns how many were cancelled.
     */
    private int closeAndCancel(SessionLease l, ArraydException cause) {
        // closed first: commands submitted from here on are refused. (A submission already past the session
        // check when it closes can still land after the cancel; ruling that out needs the scheduler to close
        // and cancel under its submit lock.)
        scheduler.closeSession(l.session);
        return scheduler.cancelPending(l.session, cause);
    }

    /** Closes every session whose lease ran out; returns how many. */
    int reapExpired() {
        long now = clock.nanoTime();
        int n = 0;
        for (SessionLease l : List.copyOf(byToken.values())) {
            if (!l.closed && l.expired(now)) {
                long idleMillis = TimeUnit.NANOSECONDS.toMillis(now - l.renewedNanos);
                int buffers = l.session.bufferCount();
                long bytes = l.ownedBuffers.values().stream().mapToLong(Long::longValue).sum();
                long leaseMillis = TimeUnit.NANOSECONDS.toMillis(l.leaseNanos);
                int cancelled = closeAndCancel(l, new ArraydException(ErrorCode.CANCELLED, "cancelled: " + l.session
                        + " was reclaimed (its lease of " + leaseMillis + " ms ran out) before this command finished"));
                reclaimed.increment();
                n++;
                log.info("reclaimed {} of tenant {}: lease of {} ms ran out ({} ms without renewal); freeing {} "
                        + "buffers ({} bytes), {} pending commands cancelled", l.session, l.tenantName(),
                        leaseMillis, idleMillis, buffers, bytes, cancelled);
            }
        }
        return n;
    }

    private void closed(SessionLease l) {
        l.closed = true;
        byToken.remove(l.session.token(), l);
        l.releaseAll();
        if (regions != null) {
            l.regions.removeAll().forEach(regions::retire); // freed once its commands are done
        }
    }

    /** The shared-memory regions' broker, or null when the daemon has no Unix socket. */
    dev.arrayd.server.regions.RegionBroker regions() {
        return regions;
    }

    int size() {
        return byToken.size();
    }
}
