package dev.arrayd.devices.api.support;

import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * How a worker thread waits for work: it spins for a while (about one wake-up's cost), then parks; a
 * producer pays for an unpark only when the worker has actually parked. The handshake is Dekker-style on
 * volatiles: the worker publishes {@code parked} and then re-checks for work; a producer publishes its
 * work and then reads {@code parked} ({@link #wake}); one of them sees the other.
 */
public final class SpinPark {

    private final long spinNanos;
    private volatile boolean parked;

    public SpinPark(long spinNanos) {
        this.spinNanos = spinNanos;
    }

    /**
     * On the worker, when it found nothing to do: returns once {@code ready} holds, or after a park (which
     * may end spuriously: the caller looks for work again either way).
     */
    public void idle(BooleanSupplier ready) {
        idle(ready, 0);
    }

    /** {@link #idle(BooleanSupplier)}, parking at most {@code maxParkNanos} (0: until woken). */
    public void idle(BooleanSupplier ready, long maxParkNanos) {
        long spinUntil = System.nanoTime() + spinNanos;
        while (!ready.getAsBoolean() && System.nanoTime() < spinUntil) {
            Thread.onSpinWait();
        }
        if (ready.getAsBoolean()) {
            return;
        }
        parked = true;
        if (!ready.getAsBoolean()) {
            if (maxParkNanos > 0) {
                LockSupport.parkNanos(this, maxParkNanos);
            } else {
                LockSupport.park(this);
            }
        }
        parked = false;
    }

    /** On a producer, after publishing work: wakes {@code worker} if it parked. */
    public void wake(Thread worker) {
        if (parked) {
            LockSupport.unpark(worker);
        }
    }
}
