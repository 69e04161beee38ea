package dev.arrayd.client;

import io.grpc.Status;

/**
 * A command failed: rejected with its batch, failed on the device, cancelled with its session, or lost
 * with a failed session stream. {@link #status()} holds the gRPC code and the daemon's message.
 */
public final class ArraydCommandException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final long event;
    private final transient Status status;

    public ArraydCommandException(long event, Status status) {
        super("event " + event + ": " + status.getCode()
                + (status.getDescription() == null ? "" : ": " + status.getDescription()), status.getCause());
        this.event = event;
        this.status = status;
    }

    /** The id of the event that failed. */
    public long event() {
        return event;
    }

    /** The failure's status: code and description. */
    public Status status() {
        return status;
    }

    /** Shorthand for {@code status().getCode()}. */
    public Status.Code code() {
        return status.getCode();
    }
}
