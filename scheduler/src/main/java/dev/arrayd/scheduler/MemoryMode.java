package dev.arrayd.scheduler;

/**
 * Lifetime and coherence policy of a buffer (OCANNL's tensor-node memory modes).
 *
 * <ul>
 *   <li>{@link #DEVICE}: lives on devices only; replicas follow its readers; a replica evicted while it
 *       holds the only current data is written back to host memory first;</li>
 *   <li>{@link #HOSTED_CONSTANT}: written (once, or in several parts, e.g. a chunked upload) before its first
 *       read, then read-only: a write after a command that reads it is refused with FAILED_PRECONDITION;
 *       each write is also copied to the host, so replicas are made from the host copy and dropped
 *       without write-back</li>
 *   <li>{@link #HOSTED_CHANGED_ON_DEVICES}: a host copy exists from creation; devices change it; a
 *       cross-device transfer goes through (and refreshes) the host copy; downloads read the newest
 *       replica;</li>
 *   <li>{@link #HOSTED_VOLATILE}: changes on the host: an upload of the whole buffer also replaces the
 *       host copy and invalidates every other device's replica;</li>
 *   <li>{@link #LOCAL}: scratch for one graph: the first batch (or graph replay) that uses it consumes
 *       its handle, and its memory is freed when that batch's last command on it completes.</li>
 * </ul>
 */
public enum MemoryMode {
    DEVICE, HOSTED_CONSTANT, HOSTED_CHANGED_ON_DEVICES, HOSTED_VOLATILE, LOCAL;

    /** Whether the buffer keeps a host copy (and cross-device transfers go through it). */
    public boolean hosted() {
        return this == HOSTED_CONSTANT || this == HOSTED_CHANGED_ON_DEVICES || this == HOSTED_VOLATILE;
    }
}
