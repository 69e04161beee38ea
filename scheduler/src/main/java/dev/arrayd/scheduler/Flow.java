package dev.arrayd.scheduler;

import java.util.ArrayDeque;

/**
 * The ready commands of one session in one priority class on one device, and the device time that
 * session has had there, in virtual nanoseconds (device nanoseconds divided by the session's weight).
 * Owned by its {@link DeviceQueue}; every field is guarded by that queue's lock.
 */
final class Flow {

    final Session session;
    final int cls; // Priority ordinal
    final ArrayDeque<Command> queue = new ArrayDeque<>(4);
    /** Virtual device time received: the dispatcher serves the backlogged flow with the least. */
    double vtime;
    /** Whether it is in its class's backlogged list. */
    boolean backlogged;
    /** Its commands handed to the device and not finished: while there are some, it is not idle. */
    int inflight;

    Flow(Session session, int cls) {
        this.session = session;
        this.cls = cls;
    }

    /** Charges {@code nanos} of device time (negative: a refund) at the session's current weight. */
    void charge(double nanos) {
        vtime += nanos / session.weight();
    }

    @Override
    public String toString() {
        return session + " " + Priority.values()[cls].label();
    }
}
