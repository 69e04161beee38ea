package dev.arrayd.scheduler;

/**
 * MSI state of one replica of a buffer (OCANNL's {@code devices_not_lagging_host}, StarPU's replicas).
 * MODIFIED: the only current copy; SHARED: current, and so is at least one other copy; INVALID: stale
 * or empty, made current by a transfer before anything reads it.
 */
public enum ReplicaState {
    MODIFIED, SHARED, INVALID;

    /** Single-letter form for logs and DescribeBuffer: M, S or I. */
    public char letter() {
        return name().charAt(0);
    }
}
