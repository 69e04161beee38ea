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
     * flags (two machines with one model but different enabled features get different cache keys).
     */
    static String target() {
        String flags = "";
        for (String line : readLines(Path.of("/proc/cpuinfo"))) {
            if (line.startsWith("flags")) {
                flags = line;
                break;
            }
        }
        return System.getProperty("os.arch") + " " + cpuModel() + " flags#" + Integer.toHexString(flags.hashCode());
    }

    /** The first line of {@code gcc --version} (e.g. {@code gcc (Ubuntu 13.2.0-23ubuntu4) 13.2.0}), or the command when it cannot be read. */
    static String compilerIdentity(String gcc) {
        try {
            Process process = new ProcessBuilder(gcc, "--version").redirectErrorStream(true).start();
            String first;
            try (var r = new java.io.BufferedReader(new java.io.InputStreamReader(process.getInputStream(),
                    java.nio.charset.StandardCharsets.UTF_8))) {
                first = r.readLine();
                while (r.readLine() != null) {
                    // drain, so that gcc never blocks on a full pipe
                }
            }
            process.waitFor(10, TimeUnit.SECONDS);
            return first == null ? gcc : first.strip();
        } catch (IOException e) {
            return gcc;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return gcc;
        }
    }

    /** Empty when {@code gcc --version} runs and exits 0; otherwise exactly what is missing. */
    static Optional<String> gccProblem(String gcc) {
        Process process;
        try {
            process = new ProcessBuilder(gcc, "--version").redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            return Optional.of("cannot run the C compiler \"" + gcc + "\" (" + e.getMessage()
                    + "); the cpu backend compiles kernels with gcc: install gcc or point gccCommand at it");
        }
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return Optional.of("\"" + gcc + " --version\" did not finish within 10 s");
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            return Optional.of("interrupted while probing \"" + gcc + "\"");
        }
        if (process.exitValue() != 0) {
            return Optional.of("\"" + gcc + " --version\" exited with " + process.exitValue() + " (expected: 0)");
        }
        return Optional.empty();
    }

    private static List<String> readLines(Path path) {
        try {
            return Files.readAllLines(path);
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }
}
