package dev.arrayd.server;

import dev.arrayd.devices.api.support.ThreadNice;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lowers the scheduling priority of the JVM's optimizing JIT compiler threads ({@code --jit-nice}).
 *
 * <p>A daemon that has just started, or has just met a new code path, compiles in bursts: on a 2-core
 * VM its C2 thread takes most of a core, on and off, for the first 20 s of traffic. At
 * normal priority those bursts win a core from everything the daemon runs at a lowered one (the CPU
 * devices' kernel threads, {@code --cpu-nice}) and compete with its transport threads, so tenants'
 * kernels and round trips pay for the daemon's warm-up. At the kernels' nice value (the default) the
 * compiler shares a busy core with them instead of taking it, and the transport wins it. Lower still
 * it gets only a sliver of a saturated host and the hot paths stay in the slower profiling tier for a
 * minute or more, which costs the tenants more than the compiler would.
 *
 * <p>The compiler threads are the JVM's own, not Java threads: they are found by name in
 * {@code /proc/self/task} ({@code C2 CompilerThread0}, {@code C2 CompilerThread1}, and the like)
 * and changed with {@code setpriority(PRIO_PROCESS, tid, n)}, which on Linux acts on one thread.
 * The JVM starts more of them when its queue grows, so {@link #apply()} is called again from time
 * to time; each thread is changed once. Raising a nice value needs no privilege. Where this is not
 * Linux, it does nothing and says so once.
 *
 * <p>Public for the benchmark clients, which lower their own compiler threads the same way: a client
 * beside the daemon should not take the cores it measures.
 */
public final class JitThreadPriority {

    private static final Logger log = LoggerFactory.getLogger(JitThreadPriority.class);

    private static final Path TASKS = Path.of("/proc/self/task");

    private final int delta;
    private final Set<Integer> done = new HashSet<>();
    private final boolean supported;
    private boolean warned;

    /** @param delta added to each compiler thread's nice value (capped at 19); 0 changes nothing */
    public JitThreadPriority(int delta) {
        this.delta = delta;
        this.supported = delta > 0 && Files.isDirectory(TASKS) && ThreadNice.problem().isEmpty();
        if (delta > 0 && !supported) {
            warnOnce("JIT compiler threads keep their priority: "
                    + ThreadNice.problem().orElse("no /proc/self/task here (" + System.getProperty("os.name") + ")"));
        }
    }

    /**
     * Lowers every optimizing compiler thread not yet lowered.
     *
     * @return how many threads were changed by this call
     */
    public synchronized int apply() {
        if (!supported) {
            return 0;
        }
        int changed = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                int tid;
                try {
                    tid = Integer.parseInt(task.getFileName().toString());
                } catch (NumberFormatException e) {
                    continue;
                }
                if (done.contains(tid) || !isOptimizingCompilerThread(name(task))) {
                    continue;
                }
                if (ThreadNice.raise(tid, delta).isEmpty()) {
                    warnOnce("JIT compiler threads keep their priority: setpriority(" + tid + ", +" + delta + ") failed");
                    continue;
                }
                done.add(tid);
                changed++;
            }
        } catch (IOException e) {
            warnOnce("JIT compiler threads keep their priority: " + e);
        }
        return changed;
    }

    /**
     * CPU time the JIT compiler threads now alive have used, in ms (Linux: {@code utime + stime} of
     * {@code /proc/self/task/<tid>/stat}, in 10 ms ticks); 0 where there is no {@code /proc}. Unlike the
     * JVM's compile time, which counts a compilation when it ends, this counts a long one while it
     * runs: a compiler thread kept waiting at a high nice value may finish one compilation long after
     * it began, and until then its cost shows only here.
     */
    public static long compilerCpuMillis() {
        if (!Files.isDirectory(TASKS)) {
            return 0;
        }
        long ticks = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                if (!isCompilerThread(name(task))) {
                    continue;
                }
                try {
                    String stat = Files.readString(task.resolve("stat"), StandardCharsets.UTF_8);
                    String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    ticks += Long.parseLong(after[11]) + Long.parseLong(after[12]);
                } catch (IOException | RuntimeException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException e) {
            return 0;
        }
        return ticks * 10;
    }

    /** HotSpot's {@code C1/C2 CompilerThreadN} and JVMCI's {@code JVMCI CompilerThreadN}, as the kernel shortens them. */
    static boolean isCompilerThread(String name) {
        return name.contains("CompilerThre") || name.startsWith("JVMCI");
    }

    /**
     * The optimizing tier's threads (C2, or a JVMCI compiler such as Graal), the ones lowered. The
     * quick first tier (C1) keeps its priority: it takes a second or so of CPU in all and turns
     * interpreted code into compiled code, which a daemon wants at once.
     */
    static boolean isOptimizingCompilerThread(String name) {
        return name.startsWith("C2 Compiler") || name.startsWith("JVMCI");
    }

    /** A thread's name from {@code /proc}, or "" if it has already gone. */
    static String name(Path task) {
        try {
            return Files.readString(task.resolve("comm"), StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return "";
        }
    }

    /** A thread's nice value from {@code /proc/<tid>/stat} (field 19), or empty if it cannot be read. */
    static Optional<Integer> nice(Path task) {
        try {
            String stat = Files.readString(task.resolve("stat"), StandardCharsets.UTF_8);
            String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Optional.of(Integer.parseInt(after[16].trim()));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private void warnOnce(String message) {
        if (!warned) {
            warned = true;
            log.warn(message);
        }
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "JitThreadPriority[+%d, %d threads]", delta, done.size());
    }
}
