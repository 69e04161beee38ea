package dev.arrayd.devices.api;

/**
 * Completion of one {@link DeviceCommand}. Called exactly once, on a backend thread; must be fast
 * and must not throw (paired lifecycle: every submit ends in exactly one of these).
 */
public interface CommandCallback {

    /** Nothing to report: for a backend's own queue entries that carry no caller (a marker's). */
    CommandCallback NONE = new CommandCallback() {
        @Override
        public void completed(long deviceNanos) {
        }

        @Override
        public void failed(ArraydException cause) {
        }
    };

    /** @param deviceNanos time the command spent executing on the device */
    void completed(long deviceNanos);

    void failed(ArraydException cause);

    /**
     * When the command must have started, on {@link System#nanoTime()}; {@link Long#MAX_VALUE} for no deadline.
     * The scheduler holds a command back past it; a backend that queues commands where the scheduler cannot see
     * them (a peer's stream) passes it on, so the command still does not start late.
     */
    default long startByNanos() {
        return Long.MAX_VALUE;
    }
}
