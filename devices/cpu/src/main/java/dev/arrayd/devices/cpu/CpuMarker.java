package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.StreamMarker;

import java.util.concurrent.CountDownLatch;

/**
 * A CPU stream's {@link StreamMarker}: a node in the marking stream's queue, which its worker reaches
 * once the commands before it have run (a waiting stream starts without the scheduler dispatching
 * anything); a waiting stream's worker blocks on it before it runs the command that waits. Every device of one {@link CpuBackend} runs in this process, so a marker of one
 * device can be waited for by the streams of all its siblings.
 */
final class CpuMarker implements StreamMarker {

    private final Object owner; // the backend whose devices may wait for it
    private final CountDownLatch reached = new CountDownLatch(1);

    CpuMarker(Object owner) {
        this.owner = owner;
    }

    Object owner() {
        return owner;
    }

    /** The marked command finished (or was refused): wakes every waiter. Idempotent. */
    void reach() {
        reached.countDown();
    }

    @Override
    public boolean isReached() {
        return reached.getCount() == 0;
    }

    /** Blocks until reached. The scheduler's waits never form a cycle (a marker belongs to an earlier command). */
    void await() {
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
        return isReached() ? "cpu marker (reached)" : "cpu marker";
    }
}
