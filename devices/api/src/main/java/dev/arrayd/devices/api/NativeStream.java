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

    /**
     * A marker reached once every command submitted to this stream before the call has finished (a
     * marker at the stream's current end, like {@code cuEventRecord}); null where this backend has no
     * markers, and once the stream is closing (its last commands may still run: the caller must order on
     * the host). It may be reached later than the command a caller cares about (commands submitted after
     * that one count too), never earlier.
     */
    default StreamMarker mark() {
        return null;
    }

    /**
     * Whether commands of this stream can wait for {@code marker} natively: it comes from a stream of
     * the same backend (for some backends, of the same device) that supports markers.
     */
    default boolean canWaitFor(StreamMarker marker) {
        return false;
    }

    /**
     * Submits {@code command} to start only once every marker in {@code after} is reached. The backend
     * waits (on the device where it can: {@code cuStreamWaitEvent}, an OpenCL wait list; the stream's
     * worker on the CPU), so the host does not take part between the marked commands and this one. Every
     * marker must be one that {@link #canWaitFor} accepted, taken by {@link #mark()} before this call.
     * The command's device time does not include the wait.
     *
     * @throws UnsupportedOperationException where the backend has no native waits
     */
    default void submitAfter(StreamMarker[] after, DeviceCommand command, CommandCallback callback) {
        throw new UnsupportedOperationException(device() + ": no native waits (canWaitFor is false)");
    }

    /**
     * Best effort: the scheduler cancelled the command it submitted with {@code callback} after handing it over.
     * A backend that can still drop it (a peer's stream: it cancels the command on the peer, where it may be
     * waiting) does; it runs otherwise. Either way {@code callback} is called exactly once, as for any command.
     * The default does nothing.
     */
    default void cancel(CommandCallback callback) {
    }

    /** Whether nothing is queued or running. */
    boolean isIdle();

    /** Finishes queued work, then releases the stream's threads. */
    @Override
    void close();
}
