package dev.arrayd.devices.nullbackend;

import dev.arrayd.devices.api.DeviceCommand;

/**
 * What a null device does beyond completing commands: by default nothing (a launch computes nothing; data
 * commands move bytes when the device stores data). An embedder plugs in more: kernels written in Java,
 * simulated device time, a pause, jitter that shakes out missing ordering edges (the scheduler's tests do
 * all four). Called on the thread that runs the command: a stream's worker, or the caller of an inline run.
 */
public interface NullBehaviour {

    /** Nothing beyond the null device's own work. */
    NullBehaviour NONE = new NullBehaviour() { };

    /** The device's work for a command that is about to run. */
    @FunctionalInterface
    interface Work {
        /** Moves the data of a data command, runs {@link #launch} for a launch. */
        void run();
    }

    /**
     * Runs {@code command} by calling {@code work}, and returns the device time to report for it. The
     * default measures the call. May first block (a paused device) or spin (jitter, simulated cost).
     *
     * @param inline whether it runs on the caller's thread ({@code tryRunInline}) rather than the stream's worker
     */
    default long run(NullDevice device, DeviceCommand command, boolean inline, Work work) {
        long start = System.nanoTime();
        work.run();
        return System.nanoTime() - start;
    }

    /** A launch's computation; a null device has none. Reads and writes memory with {@link NullDevice#segment}. */
    default void launch(NullDevice device, DeviceCommand.Launch launch) {
    }

    /** Whether a command offered inline may run on the caller's thread now (else it goes through the stream). */
    default boolean acceptsInline(NullDevice device, DeviceCommand command) {
        return true;
    }

    /** Told of every command handed to a stream of {@code device} (submitted, or offered inline), in order. */
    default void handed(NullDevice device, DeviceCommand command) {
    }
}
