package dev.arrayd.server;

/**
 * Monotonic time for leases, token reloads and quota windows (Kafka's {@code Time}): injected so
 * that tests advance a fake clock instead of sleeping.
 */
@FunctionalInterface
public interface Clock {

    /** The system's monotonic clock. */
    Clock SYSTEM = System::nanoTime;

    long nanoTime();
}
