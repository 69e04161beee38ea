package dev.arrayd.scheduler;

/**
 * Hooks for metrics and tracing, kept out of the scheduler's own logic: the scheduler calls them and
 * never depends on what they do. Every method has a no-op default; implementations must be fast and
 * must not throw (they run on transport, device and compile threads).
 */
public interface SchedulerObserver {

    SchedulerObserver NONE = new SchedulerObserver() {};

    /**
     * A session opened. The returned observer is told about every command of that session, so an
     * implementation can resolve per-client state once here instead of once per command.
     */
    default CommandObserver sessionOpened(Session session) {
        return CommandObserver.NONE;
    }

    /** A session closed (by its client or at shutdown). */
    default void sessionClosed(Session session) {}

    /**
     * A device found after the start joined (see {@link Scheduler#addDevices}); called before any command can
     * use it, under the submit lock: resolve its per-device state here.
     */
    default void deviceAdded(DeviceRuntime device) {}

    /** One backend compiled one module (or failed to), taking {@code nanos}. */
    default void compiled(String backend, long nanos, boolean succeeded) {}
}
