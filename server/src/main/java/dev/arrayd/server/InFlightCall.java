package dev.arrayd.server;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A streaming call (WriteBuffer, ReadBuffer) in progress, holding one place in its tenant's in-flight
 * quota and in its session's in-flight count until {@link #release()}: a client cannot get past the
 * in-flight quota by moving its work from commands into streaming calls.
 */
final class InFlightCall {

    private final SessionLease lease;
    private final AtomicBoolean released = new AtomicBoolean();

    private InFlightCall(SessionLease lease) {
        this.lease = lease;
    }

    /**
     * Takes the place, or throws RESOURCE_EXHAUSTED naming the quota and the call.
     *
     * @param call the RPC's name, for the message
     */
    static InFlightCall reserve(SessionLease lease, String call) {
        lease.usage.reserveInFlightCall(call);
        lease.inFlight.incrementAndGet();
        return new InFlightCall(lease);
    }

    /** Gives the place back; only the first call does anything, so every way a call ends may call it. */
    void release() {
        if (released.compareAndSet(false, true)) {
            lease.commandDone();
        }
    }
}
