package dev.arrayd.devices.cpu;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the CPU backend.
 *
 * @param gccCommand        the C compiler to run; default {@code "gcc"} (looked up on {@code PATH})
 * @param deviceMemoryBytes memory of each CPU device for slabs; 0 (the default) means half of the
 *                          machine's physical memory (MemTotal of {@code /proc/meminfo}, 4 GiB when
 *                          unreadable) divided among the devices opened, leaving the rest to the JVM
 *                          heap, the page cache and the programs beside the daemon
 * @param compileTimeout    how long one gcc invocation may run before it is killed and the compile
 *                          fails with DEADLINE_EXCEEDED; default 60 s, which a large machine-generated
 *                          kernel at {@code -O3} stays well inside
 */
public record CpuOptions(String gccCommand, long deviceMemoryBytes, Duration compileTimeout) {

    public static final String DEFAULT_GCC = "gcc";
    public static final Duration DEFAULT_COMPILE_TIMEOUT = Duration.ofSeconds(60);

    public CpuOptions {
        Objects.requireNonNull(gccCommand, "gccCommand");
        Objects.requireNonNull(compileTimeout, "compileTimeout");
        if (gccCommand.isBlank()) {
            throw new IllegalArgumentException("gccCommand: \"" + gccCommand + "\" (expected: a command)");
        }
        if (deviceMemoryBytes < 0) {
            throw new IllegalArgumentException("deviceMemoryBytes: " + deviceMemoryBytes + " (expected: >= 0, 0 for the default)");
        }
        if (compileTimeout.isNegative()) {
            throw new IllegalArgumentException("compileTimeout: " + compileTimeout + " (expected: >= 0)");
        }
    }

    public static CpuOptions defaults() {
        return new CpuOptions(DEFAULT_GCC, 0, DEFAULT_COMPILE_TIMEOUT);
    }

    public CpuOptions withGccCommand(String gcc) {
        return new CpuOptions(gcc, deviceMemoryBytes, compileTimeout);
    }

    public CpuOptions withDeviceMemoryBytes(long bytes) {
        return new CpuOptions(gccCommand, bytes, compileTimeout);
    }

    public CpuOptions withCompileTimeout(Duration timeout) {
        return new CpuOptions(gccCommand, deviceMemoryBytes, timeout);
    }
}
