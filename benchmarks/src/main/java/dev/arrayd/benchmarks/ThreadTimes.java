package dev.arrayd.benchmarks;

import dev.arrayd.devices.api.Quote;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What the Linux scheduler counted for every thread of one process, from {@code /proc/<pid>/task/<tid>/schedstat}
 * (nanoseconds on a core, nanoseconds runnable but waiting for one, times it was put on a core) and {@code comm}
 * (the thread's name, cut to 15 bytes), and for the whole machine from {@code /proc/stat}.
 */
final class ThreadTimes {

    private ThreadTimes() {}

    /** One thread's counters. */
    record Thread(String name, long runNanos, long waitNanos, long slices) {}

    /** The threads of one process at one moment, by thread id. */
    record Process(long pid, Map<Long, Thread> threads) {
        /**
         * What each thread did since {@code before} (a thread that started since counts from zero; one that
         * ended since is lost, with what it did).
         */
        List<Thread> since(Process before) {
            return threads.entrySet().stream().map(e -> {
                Thread now = e.getValue();
                Thread then = before.threads.get(e.getKey());
                return then == null ? now : new Thread(now.name(), now.runNanos() - then.runNanos(),
                        now.waitNanos() - then.waitNanos(), now.slices() - then.slices());
            }).toList();
        }
    }

    /** The machine's time in USER_HZ ticks from the aggregate {@code cpu} line: busy (all but idle and iowait) and idle. */
    record Machine(long busyTicks, long idleTicks) {
        Machine since(Machine before) {
            return new Machine(busyTicks - before.busyTicks, idleTicks - before.idleTicks);
        }
    }

    /** Whether this system has the files (Linux with schedstat). */
    static boolean available(long pid) {
        return Files.isReadable(Path.of("/proc", Long.toString(pid), "task"))
                && Files.isReadable(Path.of("/proc/self/schedstat")) && Files.isReadable(Path.of("/proc/stat"));
    }

    static Process of(long pid) throws IOException {
        Map<Long, Thread> threads = new HashMap<>();
        Path dir = Path.of("/proc", Long.toString(pid), "task");
        try (Stream<Path> tasks = Files.list(dir)) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    String name = Files.readString(t.resolve("comm")).strip();
                    threads.put(Long.parseLong(t.getFileName().toString()),
                            parseSchedstat(name, Files.readString(t.resolve("schedstat"))));
                } catch (NoSuchFileException ended) {
                    // the thread ended while we listed them
                }
            }
        }
        return new Process(pid, threads);
    }

    static Machine machine() throws IOException {
        return parseStat(Files.readString(Path.of("/proc/stat")));
    }

    /** {@code "<run ns> <wait ns> <slices>"}. */
    static Thread parseSchedstat(String name, String line) {
        String[] f = line.strip().split("\\s+");
        if (f.length < 3) {
            throw new IllegalArgumentException("schedstat of " + name + ": " + Quote.string(line.strip()) + " (expected: 3 numbers)");
        }
        return new Thread(name, Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]));
    }

    /** The first line of {@code /proc/stat}: {@code cpu user nice system idle iowait irq softirq steal ...}. */
    static Machine parseStat(String stat) {
        String first = stat.lines().findFirst().orElse("");
        String[] f = first.strip().split("\\s+");
        if (f.length < 5 || !f[0].equals("cpu")) {
            throw new IllegalArgumentException("/proc/stat: " + Quote.string(first) + " (expected: cpu and its ticks)");
        }
        long busy = 0;
        long idle = 0;
        // guest and guest_nice (fields 9 and 10) are already counted in user and nice
        for (int i = 1; i < Math.min(f.length, 9); i++) {
            long v = Long.parseLong(f[i]);
            if (i == 4 || i == 5) {
                idle += v;
            } else {
                busy += v;
            }
        }
        return new Machine(busy, idle);
    }
}
