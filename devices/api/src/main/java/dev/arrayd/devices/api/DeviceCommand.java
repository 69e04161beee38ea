package dev.arrayd.devices.api;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * What a {@link NativeStream} executes. Every command is ready when submitted: the scheduler has
 * already waited for its dependencies. Host memory appears as {@link MemorySegment}s owned by the
 * caller, which keeps them alive until the command's callback has run.
 */
public sealed interface DeviceCommand {

    /**
     * Runs {@code kernel} over a grid. {@code localDims} is null when the backend chooses.
     * Dims arrays have 1 to 3 entries, all positive; local dims divide global dims.
     */
    record Launch(Kernel kernel, long[] globalDims, long[] localDims, List<KernelArg> args) implements DeviceCommand {}

    /** Host to device. */
    record Upload(MemorySegment src, MemRef dst) implements DeviceCommand {}

    /** Device to host. */
    record Download(MemRef src, MemorySegment dst) implements DeviceCommand {}

    /** Within one device (both refs belong to it). */
    record Copy(MemRef src, MemRef dst) implements DeviceCommand {}

    /**
     * From another device of the same backend straight into this one: {@code src} belongs to
     * {@code srcDevice}, {@code dst} to the device whose stream runs the command. The scheduler sends
     * it only when {@link Device#canCopyFrom} said yes, and orders it after the source's writers.
     */
    record PeerCopy(Device srcDevice, MemRef src, MemRef dst) implements DeviceCommand {}

    /** Repeats an element pattern of {@code patternBytes} (1, 2, 4 or 8; little-endian {@code pattern}) over {@code dst}. */
    record Fill(MemRef dst, long pattern, int patternBytes) implements DeviceCommand {}
}
