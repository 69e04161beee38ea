package dev.arrayd.devices.cpu;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** What the host offers: cores, physical memory, CPU model, and whether gcc can be run. */
final class HostProbe {

    static final long FALLBACK_MEMORY_BYTES = 4L << 30;

    private HostProbe() {}

    static int cores() {
        return Runtime.getRuntime().availableProcessors();
    }

    /** MemTotal of /proc/meminfo, or 4 GiB when it cannot be read (non-Linux, restricted /proc). */
    static long physicalMemoryBytes() {
        for (String line : readLines(Path.of("/proc/meminfo"))) {
            if (line.startsWith("MemTotal:")) {
                String[] parts = line.substring("MemTotal:".length()).trim().split("\\s+");
                try {
                    return Long.parseLong(parts[0]) * 1024;
                } catch (NumberFormatException e) {
                    return FALLBACK_MEMORY_BYTES;
                }
            }
        }
        return FALLBACK_MEMORY_BYTES;
    }

    static String cpuModel() {
        for (String line : readLines(Path.of("/proc/cpuinfo"))) {
            if (line.startsWith("model name")) {
                int colon = line.indexOf(':');
                if (colon >= 0 && !line.substring(colon + 1).isBlank()) {
                    return line.substring(colon + 1).trim();
                }
            }
        }
        return "cpu";
    }

    /**
     * What {@code -march=native} compiles for: the architecture, the CPU model and a hash of its feature
     * flags (two machines with one model but different enabled features get different cache keys). Read
     * once: the host does not change under a running daemon.
     */
    static String target() {
        return Target.VALUE;
    }

    private static final class Target {
        static final String VALUE = readTarget();
    }

    private static String readTarget() {
        String flags = "";
        for (String line : readLines(Path.of("/proc/cpuinfo"))) {
            if (line.startsWith("flags")) {
                flags = line;
                break;
            }
        }
        return System.getProperty("os.arch") + " " + cpuModel() + " flags#" + Integer.toHexString(flags.hashCode());
    }

    /**
     * What one run of {@code gcc --version} says: whether the compiler works ({@code problem} empty) and its
     * identity, the first line it printed (e.g. {@code gcc (Debian 12.2.0-14) 12.2.0}; the command itself when
     * it printed nothing), which every compile-cache key includes.
     */
    record Gcc(Optional<String> problem, String identity) {}

    /** Runs {@code gcc --version} once: see {@link Gcc}. */
    static Gcc gcc(String gcc) {
        Process process;
        try {
            process = new ProcessBuilder(gcc, "--version").redirectErrorStream(true).start();
        } catch (IOException e) {
            return new Gcc(Optional.of("cannot run the C compiler \"" + gcc + "\" (" + e.getMessage()
                    + "); the cpu backend compiles kernels with gcc: install gcc or point gccCommand at it"), gcc);
        }
        String first = null;
        try (var r = new java.io.BufferedReader(new java.io.InputStreamReader(process.getInputStream(),
                java.nio.charset.StandardCharsets.UTF_8))) {
            first = r.readLine();
            while (r.readLine() != null) {
                // drain, so that gcc never blocks on a full pipe
            }
        } catch (IOException e) {
            // the exit status says what matters
        }
        String identity = first == null ? gcc : first.strip();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return new Gcc(Optional.of("\"" + gcc + " --version\" did not finish within 10 s"), identity);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            return new Gcc(Optional.of("interrupted while probing \"" + gcc + "\""), identity);
        }
        if (process.exitValue() != 0) {
            return new Gcc(Optional.of("\"" + gcc + " --version\" exited with " + process.exitValue() + " (expected: 0)"),
                    identity);
        }
        return new Gcc(Optional.empty(), identity);
    }

    private static List<String> readLines(Path path) {
        try {
            return Files.readAllLines(path);
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }
}
