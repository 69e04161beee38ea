package dev.arrayd.scheduler;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The ready commands of one session in one priority class on one device, and the device time that
 * session has had there within its tenant's {@link Share}. Owned by its {@link DeviceQueue}; every
 * field is guarded by that queue's lock.
 *
 * <p>Fair share has two levels: tenants share a device by weight (a {@link Share}'s virtual time is
 * device nanoseconds divided by the tenant's weight), and the sessions of one tenant share what their
 * tenant gets equally (a flow's virtual time is plain device nanoseconds). So a tenant's weight is
 * its weight however many sessions it opens.
 */
final class Flow {

    final Session session;
    final int cls; // Priority ordinal
    final ArrayDeque<Command> queue = new ArrayDeque<>(4);
    /** Device nanoseconds received within its tenant's share: the share serves its flow with the least. */
    double vtime;
    /** Whether it is in its share's backlogged list. */
    boolean backlogged;
    /** Its commands handed to the device and not finished: while there are some, it is not idle. */
    int inflight;
    /** Backlogged or in flight: listed in its share's active flows. */
    boolean active;
    /** The tenant it charges; changed (when the session's tenant changes) only while the flow is idle. */
    Share share;

    Flow(Session session, int cls, Share share) {
        this.session = session;
        this.cls = cls;
        this.share = share;
    }

    /**
     * Charges {@code nanos} of device time (negative: a refund): to this flow as is, to its tenant at
     * the session's current weight (the tenant's, set by whoever authenticated the session).
     */
    void charge(double nanos) {
        vtime += nanos;
        share.vtime += nanos / session.weight();
    }

    @Override
    public String toString() {
        return session + " " + Priority.values()[cls].label();
    }

    /**
     * One tenant's share of one device in one priority class: the flows of its sessions, and the
     * device time the tenant has had there in virtual nanoseconds (device nanoseconds divided by its
     * weight). Kept for the device's life once created (tenants are few: they are named by the
     * operator's token file or certificates).
     */
    static final class Share {

        final String tenant;
        final int cls;
        /** Virtual device time received: the dispatcher serves the backlogged share with the least. */
        double vtime;
        /** Start virtual time of the last of its flows served: where an idle flow of it is lifted to. */
        double clock;
        /** Its flows with queued commands. */
        final List<Flow> backlogged = new ArrayList<>(2);
        /** Its flows with queued commands or commands on the device. */
        final List<Flow> activeFlows = new ArrayList<>(2);
        /** Whether it is in its class's backlogged list (it has backlogged flows). */
        boolean listed;

        Share(String tenant, int cls) {
            this.tenant = tenant;
            this.cls = cls;
        }

        boolean active() {
            return !activeFlows.isEmpty();
        }

        @Override
        public String toString() {
            return "tenant " + tenant + " " + Priority.values()[cls].label();
        }
    }
}
