package dev.arrayd.devices.remote;

import dev.arrayd.client.Event;
import dev.arrayd.devices.api.StreamMarker;
import java.util.concurrent.CompletableFuture;

/**
 * The end of a remote stream: the peer event of its last command (null: nothing was sent), which streams of the
 * same peer wait for on the peer ({@code wait_events}); a marker of a lost connection is reached already. When the
 * stream's last command was a fetch from another peer, no peer event stands for it: {@code fetch} does, and the
 * marker can only be waited for on the host.
 */
record RemoteMarker(PeerLink link, int generation, Event event, CompletableFuture<?> fetch) implements StreamMarker {

    @Override
    public boolean isReached() {
        return fetch != null ? fetch.isDone() : event == null || event.future().isDone();
    }

    /** Whether a stream of {@code other}'s peer can wait for it there. */
    boolean waitableOn(PeerLink other) {
        return fetch == null && link == other;
    }
}
