package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.StreamMarker;

/**
 * The callback a backend queues for a command submitted with
 * {@link dev.arrayd.devices.api.NativeStream#submitAfter}: it carries the markers to its stream's
 * worker (which waits for them its own way before running the command) and forwards the completion to
 * the caller's callback. The markers are the backend's own: {@code submitAfter} checked them.
 */
public record AfterMarkers(CommandCallback inner, StreamMarker[] after) implements CommandCallback {

    @Override
    public void completed(long deviceNanos) {
        inner.completed(deviceNanos);
    }

    @Override
    public void failed(ArraydException cause) {
        inner.failed(cause);
    }
}
