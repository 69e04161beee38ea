package dev.arrayd.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Where a Task Bench task's time goes: one graph run again while the Linux scheduler's counters of every
 * thread of the daemon and of the client are read before and after, and the machine's busy and idle time.
 * Each thread is put in a {@link Where} by its name; the kernel's own share is what it takes at the
 * in-process peak's speed, the rest of the stream workers' time is theirs beside it. Per task: time on a
 * core, time runnable but waiting for one, and how often a thread of that kind was put on a core (each
 * is a wake-up or a preemption: the hand-offs between threads show here).
 */
final class TaskBenchBreakdown {

    /** Linux's USER_HZ, the unit of {@code /proc/stat} (100 on every architecture the JDK runs Linux on). */
    static final long NANOS_PER_TICK = 10_000_000L;

    /** Where a thread's time goes, by its name. */
    enum Where {
        KERNEL("kernel (at the in-process peak's speed)"),
        WORKERS("daemon: stream workers, beside the kernel"),
        COMPLETIONS("daemon: completion thread"),
        DAEMON_GRPC("daemon: gRPC event loops (receive, submit, send events)"),
        DAEMON_JIT("daemon: JIT compilers"),
        DAEMON_GC("daemon: GC, safepoints"),
        DAEMON_OTHER("daemon: other threads"),
        CLIENT_SUBMIT("client: the submitting thread"),
        CLIENT_GRPC("client: gRPC event loops (send, receive events)"),
        CLIENT_JIT("client: JIT compilers"),
        CLIENT_GC("client: GC, safepoints"),
        CLIENT_OTHER("client: other threads"),
        OTHERS("other processes, interrupts"),
        IDLE("idle cores");

        final String label;

        Where(String label) {
            this.label = label;
        }

        /** A daemon thread's place, by its name as the kernel keeps it (15 bytes). */
        static Where daemon(String comm) {
            if (comm.startsWith("arrayd-cpu")) {
                return comm.endsWith("-com") || comm.contains("-compl") ? COMPLETIONS : WORKERS;
            }
            if (comm.startsWith("grpc-")) {
                return DAEMON_GRPC;
            }
            return jit(comm) ? DAEMON_JIT : gc(comm) ? DAEMON_GC : DAEMON_OTHER;
        }

        /** A client thread's place: the launcher's threads are named {@code java} (one of them submits). */
        static Where client(String comm) {
            if (comm.equals("java") || comm.equals("main")) {
                return CLIENT_SUBMIT;
            }
            return comm.startsWith("grpc-") ? CLIENT_GRPC : jit(comm) ? CLIENT_JIT : gc(comm) ? CLIENT_GC : CLIENT_OTHER;
        }

        private static boolean jit(String comm) {
            return comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler");
        }

        private static boolean gc(String comm) {
            return comm.startsWith("GC Thread") || comm.startsWith("G1 ") || comm.equals("VM Thread");
        }
    }

    /** Per task: nanoseconds on a core, nanoseconds runnable and waiting, times put on a core (NaN: not counted). */
    record Share(double runMicros, double waitMicros, double slices) {}

    /**
     * One graph's run, taken apart.
     *
     * @param totalMicros elapsed x the machine's cores / tasks: what the shares add up to
     */
    record Measured(String graph, long iterations, long tasks, double granularityMicros, double efficiency,
            double totalMicros, Map<Where, Share> shares, List<ThreadTimes.Thread> daemonThreads,
            List<ThreadTimes.Thread> clientThreads) {
        double accountedMicros() {
            return shares.values().stream().mapToDouble(Share::runMicros).sum();
        }
    }

    /** Runs {@code steps} timesteps of a graph, returns the nanoseconds it took. */
    @FunctionalInterface
    interface GraphRun {
        long run(TaskGraph g, long iterations, int steps) throws Exception;
    }

    private TaskBenchBreakdown() {}

    /** The breakdown's runs and what one wake-up costs here, or why there are none. */
    record Result(List<Measured> runs, WakeLatency.Result wake, String skipped) {

        static Result notMeasured(String why) {
            return new Result(List.of(), null, why);
        }

        /**
         * Writes breakdown.md, breakdown-threads.csv and the chart into {@code outDir}, adds its lines and its
         * RESULT key; returns its part of the section (Markdown).
         */
        String write(Path outDir, List<String> lines, StringBuilder result, int millis) throws IOException {
            if (runs.isEmpty()) {
                lines.add("taskbench: where the time goes: not measured (" + skipped + ")");
                return "Not measured in this run: " + skipped + ".\n";
            }
            chart(runs, outDir.resolve("taskbench-breakdown.png"));
            String t = table(runs);
            java.nio.file.Files.writeString(outDir.resolve("breakdown.md"), t);
            writeThreads(runs, outDir.resolve("breakdown-threads.csv"));
            lines.add("taskbench: where the time goes (see breakdown.md):");
            for (Measured m : runs) {
                lines.add(String.format(Locale.ROOT, "  %s, 2^%d iterations: %s", m.graph(),
                        63 - Long.numberOfLeadingZeros(m.iterations()), m.shares().entrySet().stream()
                                .map(e -> String.format(Locale.ROOT, "%s %.1f µs", e.getKey().name().toLowerCase(Locale.ROOT),
                                        e.getValue().runMicros())).collect(java.util.stream.Collectors.joining(", "))));
            }
            lines.add(String.format(Locale.ROOT, "  waking a parked thread: p10 %.1f µs, median %.1f µs, p90 %.1f µs, "
                    + "p99 %.1f µs (%d wake-ups)", wake.p10Micros(), wake.p50Micros(), wake.p90Micros(), wake.p99Micros(),
                    wake.wakeUps()));
            result.append(String.format(Locale.ROOT, " wake_p50_us=%.1f", wake.p50Micros()));
            Measured first = runs.getFirst();
            return String.format(Locale.ROOT, """
                    %s run again for about %d ms at %s, with the Linux scheduler's counters of every \
                    thread of the daemon and of the benchmark's JVM (`/proc/<pid>/task/<tid>/schedstat`: time on a \
                    core, time runnable but waiting for one, times put on a core) read before and after, and the \
                    machine's busy and idle time (`/proc/stat`, 10 ms ticks). Threads are grouped by name; the \
                    kernel's row is what its FLOPs take at the in-process peak's speed per core, and the stream \
                    workers' row the rest of their time. Per task, so the rows add up to elapsed x %d cores / tasks \
                    (in brackets); "times put on a core" counts wake-ups and preemptions, where the hand-offs between \
                    threads show.

                    %s
                    ![Where a task's time goes](taskbench-breakdown.png)

                    **What one hand-off costs on this machine:** a thread unparking another that is parked (the \
                    scheduler puts it on the idle core), measured in the benchmark's JVM after the graphs: \
                    median **%.1f µs** (p10 %.1f, p90 %.1f, p99 %.1f µs over %d wake-ups).
                    """, first.graph(), millis, runs.size() == 1 ? "the shortest tasks of the sweep"
                            : "the shortest tasks of the sweep and at 2^" + (63 - Long.numberOfLeadingZeros(
                                    runs.getLast().iterations())) + " iterations", Runtime.getRuntime().availableProcessors(),
                    t, wake.p50Micros(), wake.p10Micros(), wake.p90Micros(), wake.p99Micros(), wake.wakeUps());
        }
    }

    /**
     * The first graph run again for about {@code millis} at each of {@code powers} (iterations as powers of two),
     * then the wake-up probe; not measured, saying why, where the daemon's threads cannot be read apart from the
     * client's.
     */
    static Result run(BenchContext ctx, GraphRun runner, TaskGraph g, int[] powers, int width, int cores, double peak,
            int millis, int maxSteps, Progress progress) throws Exception {
        if (ctx.inProcess() || ctx.daemonPid() <= 0) {
            return Result.notMeasured(ctx.inProcess() ? "the daemon runs in the benchmark's JVM: its threads and "
                    + "the client's cannot be told apart" : "the daemon was not started by the benchmark (--target): "
                    + "its threads cannot be read");
        }
        if (!ThreadTimes.available(ctx.daemonPid())) {
            return Result.notMeasured("no /proc/<pid>/task/<tid>/schedstat on this system");
        }
        List<Measured> out = new ArrayList<>();
        for (int p : powers) {
            long iterations = 1L << p;
            double kernelNanos = ComputeKernel.flopsPerTask(iterations) / (peak / cores) * 1e9;
            int steps = (int) Math.clamp((long) (millis * 1e6 / (kernelNanos + 10_000)), 10, maxSteps);
            progress.update(String.format(Locale.ROOT, "taskbench: where the time goes, %s, iterations 2^%d, %d timesteps",
                    g.name(), p, steps));
            out.add(measure(runner, g, iterations, steps, width, cores, peak, kernelNanos, ctx.daemonPid(),
                    ProcessHandle.current().pid()));
        }
        progress.update("taskbench: what one hand-off between threads costs here");
        return new Result(out, WakeLatency.measure(5_000, 50_000), null);
    }

    /**
     * Runs the graph once with the counters read around it. {@code kernelNanos} is one task's kernel at the
     * peak's speed per core.
     */
    static Measured measure(GraphRun runner, TaskGraph g, long iterations, int steps, int width, int cores, double peak,
            double kernelNanos, long daemonPid, long clientPid) throws Exception {
        ThreadTimes.Process d0 = ThreadTimes.of(daemonPid);
        ThreadTimes.Process c0 = ThreadTimes.of(clientPid);
        ThreadTimes.Machine m0 = ThreadTimes.machine();
        long nanos = runner.run(g, iterations, steps);
        ThreadTimes.Machine m1 = ThreadTimes.machine();
        ThreadTimes.Process d1 = ThreadTimes.of(daemonPid);
        ThreadTimes.Process c1 = ThreadTimes.of(clientPid);
        long tasks = (long) steps * width;
        double flops = (double) ComputeKernel.flopsPerTask(iterations) * tasks;
        return takeApart(g.name(), iterations, tasks, nanos, cores, flops / (nanos / 1e9) / peak, kernelNanos,
                d1.since(d0), c1.since(c0), m1.since(m0));
    }

    /** The arithmetic of {@link #measure}, apart from reading the counters. */
    static Measured takeApart(String graph, long iterations, long tasks, long nanos, int cores, double efficiency,
            double kernelNanos, List<ThreadTimes.Thread> daemon, List<ThreadTimes.Thread> client,
            ThreadTimes.Machine machine) {
        double[] run = new double[Where.values().length];
        double[] wait = new double[run.length];
        double[] slices = new double[run.length];
        for (ThreadTimes.Thread t : daemon) {
            add(Where.daemon(t.name()), t, run, wait, slices);
        }
        for (ThreadTimes.Thread t : client) {
            add(Where.client(t.name()), t, run, wait, slices);
        }
        double kernelTotal = Math.min(kernelNanos * tasks, run[Where.WORKERS.ordinal()]);
        run[Where.KERNEL.ordinal()] = kernelTotal;
        run[Where.WORKERS.ordinal()] -= kernelTotal;
        double ours = 0;
        for (double r : run) {
            ours += r;
        }
        double busy = machine.busyTicks() * (double) NANOS_PER_TICK;
        run[Where.OTHERS.ordinal()] = Math.max(0, busy - ours);
        run[Where.IDLE.ordinal()] = machine.idleTicks() * (double) NANOS_PER_TICK;
        Map<Where, Share> shares = new EnumMap<>(Where.class);
        for (Where w : Where.values()) {
            boolean counted = w != Where.OTHERS && w != Where.IDLE;
            boolean kernel = w == Where.KERNEL;
            shares.put(w, new Share(run[w.ordinal()] / 1e3 / tasks, counted && !kernel ? wait[w.ordinal()] / 1e3 / tasks
                    : Double.NaN, counted && !kernel ? slices[w.ordinal()] / tasks : Double.NaN));
        }
        return new Measured(graph, iterations, tasks, nanos / 1e3 * cores / tasks, efficiency,
                nanos / 1e3 * Runtime.getRuntime().availableProcessors() / tasks, shares, daemon, client);
    }

    private static void add(Where w, ThreadTimes.Thread t, double[] run, double[] wait, double[] slices) {
        run[w.ordinal()] += t.runNanos();
        wait[w.ordinal()] += t.waitNanos();
        slices[w.ordinal()] += t.slices();
    }

    /** The Markdown table: one row per place, three columns per measured run. */
    static String table(List<Measured> runs) {
        StringBuilder b = new StringBuilder("| per task |");
        StringBuilder sep = new StringBuilder("| --- |");
        for (Measured m : runs) {
            String head = String.format(Locale.ROOT, "2^%d iterations (%.0f µs, %.0f%%)",
                    63 - Long.numberOfLeadingZeros(m.iterations()), m.granularityMicros(), 100 * m.efficiency());
            b.append(" ").append(head).append(": on a core µs | waiting for a core µs | times put on a core |");
            sep.append(" --- | --- | --- |");
        }
        b.append('\n').append(sep).append('\n');
        for (Where w : Where.values()) {
            b.append("| ").append(w.label).append(" |");
            for (Measured m : runs) {
                Share s = m.shares().get(w);
                b.append(String.format(Locale.ROOT, " %.1f | %s | %s |", s.runMicros(), num(s.waitMicros(), "%.1f"),
                        num(s.slices(), "%.2f")));
            }
            b.append('\n');
        }
        b.append("| **sum** (elapsed x cores / tasks) |");
        for (Measured m : runs) {
            b.append(String.format(Locale.ROOT, " %.1f (%.1f) | | |", m.accountedMicros(), m.totalMicros()));
        }
        return b.append('\n').toString();
    }

    private static String num(double v, String format) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, format, v);
    }

    /** Every thread's counters of every run, for anyone who wants to group them otherwise. */
    static void writeThreads(List<Measured> runs, Path csv) throws IOException {
        try (java.io.BufferedWriter w = java.nio.file.Files.newBufferedWriter(csv)) {
            w.write("graph,iterations,tasks,process,thread,where,run_ns,wait_ns,slices\n");
            for (Measured m : runs) {
                for (ThreadTimes.Thread t : m.daemonThreads()) {
                    w.write(line(m, "daemon", t, Where.daemon(t.name())));
                }
                for (ThreadTimes.Thread t : m.clientThreads()) {
                    w.write(line(m, "client", t, Where.client(t.name())));
                }
            }
        }
    }

    private static String line(Measured m, String process, ThreadTimes.Thread t, Where w) {
        return String.format(Locale.ROOT, "%s,%d,%d,%s,\"%s\",%s,%d,%d,%d%n", m.graph(), m.iterations(), m.tasks(), process,
                t.name().replace("\"", "'"), w.name().toLowerCase(Locale.ROOT), t.runNanos(), t.waitNanos(), t.slices());
    }

    /** A bar chart of the time on a core per task, one series per measured run. */
    static void chart(List<Measured> runs, Path png) throws IOException {
        List<String> labels = new ArrayList<>();
        for (Where w : Where.values()) {
            labels.add(w.label.length() <= 28 ? w.label : w.label.substring(0, 27) + "…");
        }
        BarChart chart = new BarChart("Task Bench: where a task's time goes (µs on a core per task)", "µs per task", labels);
        for (Measured m : runs) {
            List<Double> v = new ArrayList<>();
            for (Where w : Where.values()) {
                v.add(m.shares().get(w).runMicros());
            }
            chart.add(String.format(Locale.ROOT, "%s, 2^%d iterations", m.graph(),
                    63 - Long.numberOfLeadingZeros(m.iterations())), v);
        }
        chart.writePng(png);
    }
}
