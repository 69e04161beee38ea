package dev.arrayd.devices.api;

/**
 * An in-order queue of commands on one device (OCANNL's runner / stream). Commands run in
 * submission order, one after the other; each reports through its callback.
 */
public interface NativeStream extends AutoCloseable {

    DeviceId device();

    /** Enqueues a ready command. Never blocks; thread-safe. */
    void submit(DeviceCommand command, CommandCallback callback);

    /** Whether nothing is queued or running. */
    boolean isIdle();

    /** Finishes queued work, then releases the stream's threads. */
    @Override
    void close();
}
