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

    /**
     * Streams bytes between {@code ref} and a client through a {@link SlotRing}: into {@code ref} (an upload,
     * the daemon the ring's consumer) when {@code intoRef}, else out of it (a download, the producer). It waits
     * for the client inside the command, so the scheduler sends it only to a stream of the client's own, on a
     * device whose {@link Device#streamsThroughRings} is true.
     */
    record RingTransfer(MemRef ref, SlotRing ring, boolean intoRef) implements DeviceCommand {

        /** The refusal of a device that does not stream through rings (the scheduler does not send it one). */
        public static ArraydException unsupportedOn(DeviceId device) {
            return new ArraydException(ErrorCode.UNIMPLEMENTED, "ring transfer on " + device
                    + " (not supported: its streams do not copy host memory themselves)");
        }
    }

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

    /**
     * Data commands ({@link Upload}, {@link Download}, {@link Copy}, {@link Fill}) run in order as one
     * command, with one completion: how the scheduler moves a range that is not contiguous in device
     * memory (the interior of a padded array is one piece per row). {@code parts} is not empty; it may
     * be computed on access (a padded array's rows), so a backend reads each part once, in order.
     */
    record Sequence(List<DeviceCommand> parts) implements DeviceCommand {
        public Sequence {
            if (parts == null || parts.isEmpty()) {
                throw ArraydException.invalid("parts: none (expected: at least one data command)");
            }
        }

        /**
         * Part {@code i}, checked to be a data command: a launch, a peer copy or a nested sequence is
         * refused with INVALID_ARGUMENT naming its position.
         */
        public DeviceCommand part(int i) {
            DeviceCommand p = parts.get(i);
            if (!(p instanceof Upload || p instanceof Download || p instanceof Copy || p instanceof Fill)) {
                throw ArraydException.invalid("parts[" + i + "]: " + (p == null ? "null" : p.getClass().getSimpleName())
                        + " (expected: Upload, Download, Copy or Fill)");
            }
            return p;
        }

        /** Bytes the parts move or write, in all. */
        public long bytes() {
            long n = 0;
            for (int i = 0; i < parts.size(); i++) {
                n += switch (parts.get(i)) {
                    case Upload u -> u.dst().bytes();
                    case Download d -> d.src().bytes();
                    case Copy c -> c.src().bytes();
                    case Fill f -> f.dst().bytes();
                    default -> 0;
                };
            }
            return n;
        }
    }
}
