package dev.arrayd.devices.api;

/**
 * An in-order queue of commands on one device (OCANNL's runner / stream). Commands run in
 * submission order, one after the other; each reports through its callback.
 */
public interface NativeStream extends AutoCloseable {

    DeviceId device();

    /** Enqueues a ready command. Never blocks; thread-safe. */
    void submit(DeviceCommand command, CommandCallback callback);

    /**
     * Runs a ready command synchronously on the calling thread, beside (not through) the stream's
     * queue, and reports through {@code callback} before returning. Meant for commands the caller
     * knows to be short: it saves the two thread hand-offs of {@link #submit}. A backend that cannot
     * (or a stream that is closing) returns false and does nothing.
     */
    default boolean tryRunInline(DeviceCommand command, CommandCallback callback) {
        return false;
    }

    /** Whether nothing is queued or running. */
    boolean isIdle();

    /** Finishes queued work, then releases the stream's threads. */
    @Override
    void close();
}
