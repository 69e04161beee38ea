package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.StreamMarker;
import java.util.concurrent.CountDownLatch;

/**
 * A {@link StreamMarker} for backends whose streams are host threads (the CPU, the null backend): a node in
 * the marking stream's queue, reached by its worker once the commands before it have run; a waiting
 * stream's worker blocks on it before it runs the command that waits. Devices of one backend instance
 * (its {@code owner}) run in this process, so a marker of one device can be waited for by the streams of
 * all its siblings.
 */
public final class LatchMarker implements StreamMarker {

    private final Object owner;
    private final String kind;
    private final CountDownLatch reached = new CountDownLatch(1);

    /**
     * @param owner whose streams may wait for it (the backend that opened the devices)
     * @param kind  for messages, e.g. {@code "cpu marker"}
     */
    public LatchMarker(Object owner, String kind) {
        this.owner = owner;
        this.kind = kind;
    }

    /** The queue entry that marks the place: its worker {@link #reach}es the marker when it gets there. */
    public record Node(LatchMarker marker) implements CommandCallback {
        @Override
        public void completed(long deviceNanos) {
            marker.reach();
        }

        @Override
        public void failed(ArraydException cause) {
            marker.reach();
        }
    }

    /** This marker's queue entry. */
    public Node node() {
        return new Node(this);
    }

    public Object owner() {
        return owner;
    }

    /** The marked place was passed (or the marker refused): wakes every waiter. Idempotent. */
    public void reach() {
        reached.countDown();
    }

    @Override
    public boolean isReached() {
        return reached.getCount() == 0;
    }

    /**
     * Blocks until reached, however often the caller is interrupted (its interrupt status is set again
     * afterwards). The scheduler's waits never form a cycle (a marker belongs to an earlier command).
     */
    public void await() {
        boolean interrupted = false;
        while (true) {
            try {
                reached.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return isReached() ? kind + " (reached)" : kind;
    }
}
