package dev.arrayd.client;

import java.time.Duration;
import java.util.Objects;

/**
 * Optional settings of a new session. Immutable; start from {@link #defaults()}.
 *
 * @param lease            the lease to ask for; {@link Duration#ZERO} (the default) = the daemon's default
 * @param completionLinger how long a completion may wait on the daemon so that completions leave together
 *                         while other commands of the session are in flight (fewer messages and wake-ups
 *                         on both sides for a pipelined client, at the price of up to this much latency per
 *                         completion; one that is the last in flight never waits); default zero: each
 *                         leaves at once. Whole microseconds, at most 10 ms.
 * @param dependenciesOnlyOrder dependencies (explicit waits, buffer hazards) only order the session's commands: each
 *                         runs after them whether they succeeded or not, and fails only by itself; default false.
 *                         For a client that keeps the failure rules itself (an entry daemon forwarding commands).
 */
public record SessionOptions(Duration lease, Duration completionLinger, boolean dependenciesOnlyOrder) {

    /** The longest linger the daemon accepts. */
    public static final Duration MAX_COMPLETION_LINGER = Duration.ofMillis(10);

    private static final SessionOptions DEFAULTS = new SessionOptions(Duration.ZERO, Duration.ZERO, false);

    public SessionOptions {
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(completionLinger, "completionLinger");
        if (lease.isNegative()) {
            throw new IllegalArgumentException("lease: " + lease + " (expected: >= 0)");
        }
        if (completionLinger.isNegative() || completionLinger.compareTo(MAX_COMPLETION_LINGER) > 0) {
            throw new IllegalArgumentException("completionLinger: " + completionLinger + " (expected: 0 to "
                    + MAX_COMPLETION_LINGER + ")");
        }
    }

    /** The defaults: the daemon's lease, completions at once. */
    public static SessionOptions defaults() {
        return DEFAULTS;
    }

    public SessionOptions lease(Duration lease) {
        return new SessionOptions(lease, completionLinger, dependenciesOnlyOrder);
    }

    public SessionOptions completionLinger(Duration completionLinger) {
        return new SessionOptions(lease, completionLinger, dependenciesOnlyOrder);
    }

    public SessionOptions dependenciesOnlyOrder(boolean dependenciesOnlyOrder) {
        return new SessionOptions(lease, completionLinger, dependenciesOnlyOrder);
    }
}
