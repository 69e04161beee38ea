package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import java.util.function.Supplier;

/**
 * The one place where submitted work is admitted against the in-flight limits: the tenant's quota
 * (RESOURCE_EXHAUSTED when over it) and the session's count. Each command admitted gives its place back
 * when it finishes ({@link SessionLease#commandDone}); a submission that throws gives them all back at once.
 * Unary Submit and ReplayGraph also refuse a session over {@code --session-max-inflight} (they cannot be
 * paused); the session stream applies that limit as backpressure instead.
 */
final class Admission {

    private final int sessionMaxInFlight;

    Admission(int sessionMaxInFlight) {
        this.sessionMaxInFlight = sessionMaxInFlight;
    }

    /** Commands a session may have unanswered on its stream, or in flight through unary calls. */
    int sessionMaxInFlight() {
        return sessionMaxInFlight;
    }

    /** For a unary call: RESOURCE_EXHAUSTED while the session is at its limit (the client retries). */
    void checkSession(SessionLease l) {
        if (l.inFlight.get() >= sessionMaxInFlight) {
            throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, "session: " + l.inFlight.get()
                    + " commands in flight (expected: fewer than " + sessionMaxInFlight
                    + " (session-max-inflight); wait for some to finish)");
        }
    }

    /**
     * Runs {@code submit} holding {@code n} places of the tenant's and the session's in-flight counts (the
     * tenant's quota first: over it nothing runs), given back when it throws.
     */
    <T> T admit(SessionLease l, int n, Supplier<T> submit) {
        l.usage.reserveInFlight(n);
        l.inFlight.addAndGet(n);
        try {
            return submit.get();
        } catch (RuntimeException e) {
            l.inFlight.addAndGet(-n);
            l.usage.inFlight.addAndGet(-n);
            throw e;
        }
    }
}
