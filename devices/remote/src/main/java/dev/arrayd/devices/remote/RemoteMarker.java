package dev.arrayd.devices.remote;

import dev.arrayd.client.Event;
import dev.arrayd.devices.api.StreamMarker;

/**
 * The end of a remote stream: the peer event of its last command (null: nothing was sent). Streams of the same
 * peer wait for it on the peer ({@code wait_events}); a marker of a lost connection is reached already.
 */
record RemoteMarker(PeerLink link, int generation, Event event) implements StreamMarker {

    @Override
    public boolean isReached() {
        return event == null || event.future().isDone();
    }
}
