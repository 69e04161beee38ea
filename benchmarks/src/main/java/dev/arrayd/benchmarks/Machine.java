package dev.arrayd.benchmarks;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/**
 * Where and when a benchmark ran: absolute figures only mean something beside these.
 *
 * @param cpu     the CPU model ({@code /proc/cpuinfo})
 * @param cores   processors available to this JVM
 * @param memory  physical memory, e.g. "24 GiB" ({@code /proc/meminfo})
 * @param os      kernel name and release
 * @param java    the JVM's vendor and version
 * @param date    ISO date of the run
 * @param daemon  how the daemon ran: "separate process", "in-process" or "--target"; "none (...)" for a scenario
 *                whose backends run in the benchmark's own process
 */
record Machine(String cpu, int cores, String memory, String os, String java, String date, String daemon) {

    static Machine describe(String daemon) {
        return new Machine(readCpuModel(), Runtime.getRuntime().availableProcessors(), readMemory(),
                System.getProperty("os.name") + " " + System.getProperty("os.version"),
                System.getProperty("java.vm.vendor") + " " + System.getProperty("java.runtime.version"),
                LocalDate.now().toString(), daemon);
    }

    /** One line for a report: "2 vCPU AMD EPYC ..., 24 GiB, Linux 6.18, ...". */
    String line() {
        return String.format(Locale.ROOT, "%d cores %s, %s, %s, %s", cores, cpu, memory, os, java);
    }

    void write(Path file) throws IOException {
        Properties p = new Properties();
        p.setProperty("cpu", cpu);
        p.setProperty("cores", Integer.toString(cores));
        p.setProperty("memory", memory);
        p.setProperty("os", os);
        p.setProperty("java", java);
        p.setProperty("date", date);
        p.setProperty("daemon", daemon);
        try (Writer w = Files.newBufferedWriter(file)) {
            p.store(w, "where and when this benchmark ran");
        }
    }

    static Machine read(Path file) throws IOException {
        Properties p = new Properties();
        try (var r = Files.newBufferedReader(file)) {
            p.load(r);
        }
        return new Machine(p.getProperty("cpu", "?"), Integer.parseInt(p.getProperty("cores", "0")),
                p.getProperty("memory", "?"), p.getProperty("os", "?"), p.getProperty("java", "?"),
                p.getProperty("date", "?"), p.getProperty("daemon", "?"));
    }

    private static String readCpuModel() {
        for (String line : lines("/proc/cpuinfo")) {
            if (line.startsWith("model name")) {
                return line.substring(line.indexOf(':') + 1).trim();
            }
        }
        return System.getProperty("os.arch");
    }

    private static String readMemory() {
        for (String line : lines("/proc/meminfo")) {
            if (line.startsWith("MemTotal:")) {
                long kib = Long.parseLong(line.replaceAll("[^0-9]", ""));
                return Math.round(kib / 1024.0 / 1024.0) + " GiB";
            }
        }
        return "?";
    }

    private static List<String> lines(String file) {
        try {
            return Files.readAllLines(Path.of(file));
        } catch (IOException | RuntimeException e) {
            return List.of(); // not Linux: the report says "?"
        }
    }
}
