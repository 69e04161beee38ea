package dev.arrayd.devices.remote;

import dev.arrayd.client.Event;
import dev.arrayd.devices.api.StreamMarker;
import java.util.concurrent.CompletableFuture;

/**
 * The end of a remote stream: the peer event of its last command (null: nothing was sent) in the link's connection of
 * {@code generation}, or a future: of a fetch from another peer, or of a command not sent yet. A marker of a lost
 * connection is reached already. A later command of the same stream needs nothing to wait for it (the peer runs a
 * stream's commands in order); another stream of the same peer waits for a peer event on the peer; anything else
 * is waited for on this daemon (see {@link RemoteStream#submitAfter}).
 */
record RemoteMarker(RemoteStream stream, int generation, Event event, CompletableFuture<?> fetch) implements StreamMarker {

    @Override
    public boolean isReached() {
        return fetch != null ? fetch.isDone() : event == null || event.future().isDone();
    }

    /** Done, normally, once reached (whether the command it stands for succeeded or not). */
    CompletableFuture<Void> reached() {
        CompletableFuture<?> f = fetch != null ? fetch : event == null ? null : event.future();
        return f == null ? CompletableFuture.completedFuture(null) : f.handle((v, t) -> null);
    }
}
