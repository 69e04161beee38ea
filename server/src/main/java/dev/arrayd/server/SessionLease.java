package dev.arrayd.server;

import dev.arrayd.scheduler.Session;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The server's side of a session: its tenant, its lease and what it holds against the tenant's
 * quotas. The scheduler's {@link Session} knows nothing of tenants or leases.
 */
final class SessionLease {

    final Session session;
    final TenantUsage usage;
    final long leaseNanos;
    /** The largest message its client accepts ({@code max_receive_message_bytes}). */
    final long receiveBytes;
    /** Last renewal: any call naming the session, any message on its stream, KeepAlive, ping. */
    volatile long renewedNanos;
    /** Commands submitted (Submit or the session stream) and not finished. */
    final AtomicLong inFlight = new AtomicLong();
    /** Calls naming the session in progress ({@link CallLeaseHold}): while there are any, the lease holds. */
    final AtomicInteger activeCalls = new AtomicInteger();
    /** Session streams attached and not ended. */
    final AtomicInteger liveStreams = new AtomicInteger();
    /** Buffers this session created (not those it opened through a capability) → their bytes. */
    final Map<Long, Long> ownedBuffers = new ConcurrentHashMap<>();
    /** Views created by the session: while there are any, a destroyed buffer's bytes stay charged until no view of it is left. */
    final java.util.concurrent.atomic.AtomicLong views = new java.util.concurrent.atomic.AtomicLong();
    final AtomicLong streams = new AtomicLong();
    /** Its shared-memory regions (their bytes count as device memory of the tenant until freed). */
    final dev.arrayd.server.regions.RegionTable regions = new dev.arrayd.server.regions.RegionTable();
    volatile boolean closed;

    SessionLease(Session session, TenantUsage usage, long leaseNanos, long receiveBytes, long nowNanos) {
        this.session = session;
        this.usage = usage;
        this.leaseNanos = leaseNanos;
        this.receiveBytes = receiveBytes;
        this.renewedNanos = nowNanos;
        // a LOCAL buffer is consumed by the batch that uses it: its bytes go back to the tenant then
        session.onBufferConsumed(this::bufferGone);
    }

    /** The session's handle to buffer {@code h} is gone without a DestroyBuffer call. */
    void bufferGone(long h) {
        Long bytes = ownedBuffers.remove(h);
        if (bytes != null) {
            usage.memoryBytes.addAndGet(-bytes);
        }
    }

    /** gRPC's default inbound message limit, what a client that says nothing accepts. */
    static final long DEFAULT_RECEIVE_BYTES = 4 << 20;
    /** The smallest receive limit a client may state. */
    static final long MIN_RECEIVE_BYTES = 64 << 10;

    /** A stated receive limit (uint64): 0 = {@link #DEFAULT_RECEIVE_BYTES}; INVALID_ARGUMENT below the minimum. */
    static long receiveBytes(long raw, String field) {
        if (raw == 0) {
            return DEFAULT_RECEIVE_BYTES;
        }
        if (raw > 0 && raw < MIN_RECEIVE_BYTES) {
            throw dev.arrayd.devices.api.ArraydException.invalid(field + ": " + raw + " (expected: 0 for 4 MiB, or at least "
                    + MIN_RECEIVE_BYTES + ")");
        }
        return Wire.saturated(raw);
    }

    String tenantName() {
        return usage.tenant().name();
    }

    /**
     * Whether the lease ran out. A session with a call in progress is not expired (the call renews the lease
     * when it ends). Nor is a session whose commands are still running on a device and whose stream is
     * still connected: its pings may be waiting behind the stream's flow control while the device, not the
     * client, is the bottleneck. A vanished client's calls and stream are cancelled by the transport, so it
     * gets no such grace.
     */
    boolean expired(long nowNanos) {
        return nowNanos - renewedNanos > leaseNanos && activeCalls.get() == 0
                && (inFlight.get() == 0 || liveStreams.get() == 0);
    }

    /** Called once a command of this session finished. */
    void commandDone() {
        inFlight.decrementAndGet();
        usage.inFlight.decrementAndGet();
    }

    /** Gives back what the session held to its tenant (the scheduler frees the objects themselves). */
    void releaseAll() {
        for (Long h : ownedBuffers.keySet()) {
            Long bytes = ownedBuffers.remove(h);
            if (bytes != null) {
                usage.memoryBytes.addAndGet(-bytes);
            }
        }
        long n = streams.getAndSet(0);
        usage.streams.addAndGet(-n);
    }
}
