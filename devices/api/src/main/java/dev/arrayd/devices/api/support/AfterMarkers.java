package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.StreamMarker;
import java.util.Objects;

/**
 * The callback a backend queues for a command submitted with
 * {@link dev.arrayd.devices.api.NativeStream#submitAfter}: it carries the markers to its stream's
 * worker (which waits for them its own way before running the command) and forwards the completion to
 * the caller's callback. The markers are the backend's own: {@code submitAfter} checked them.
 */
public record AfterMarkers(CommandCallback inner, StreamMarker[] after) implements CommandCallback {

    /**
     * What a backend's {@code submitAfter} queues: checks that {@code stream} can wait for every marker
     * ({@link NativeStream#canWaitFor}) and copies the array.
     *
     * @param whose what the markers must belong to, for the message (e.g. "the backend of cpu:0")
     * @throws IllegalArgumentException naming the first marker {@code stream} cannot wait for
     */
    public static AfterMarkers checked(NativeStream stream, StreamMarker[] after, CommandCallback callback, String whose) {
        Objects.requireNonNull(callback, "callback");
        for (int i = 0; i < after.length; i++) {
            if (!stream.canWaitFor(after[i])) {
                throw new IllegalArgumentException("after[" + i + "]: " + after[i] + " (expected: a marker of a stream of "
                        + whose + ")");
            }
        }
        return new AfterMarkers(callback, after.clone());
    }

    @Override
    public void completed(long deviceNanos) {
        inner.completed(deviceNanos);
    }

    @Override
    public void failed(ArraydException cause) {
        inner.failed(cause);
    }

    @Override
    public long startByNanos() {
        return inner.startByNanos();
    }
}
