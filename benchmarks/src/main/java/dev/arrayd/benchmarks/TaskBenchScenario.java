package dev.arrayd.benchmarks;

import dev.arrayd.client.Access;
import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.BufferOptions;
import dev.arrayd.client.DType;
import dev.arrayd.client.DeviceInfo;
import dev.arrayd.client.Dialect;
import dev.arrayd.client.Event;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.KernelSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import dev.arrayd.client.SessionOptions;
import dev.arrayd.client.StreamHandle;
import io.grpc.ManagedChannel;
import java.io.BufferedWriter;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code bench taskbench}: Task Bench (Slaughter et al., SC'20) through a daemon. Each graph is a grid
 * of timesteps x width tasks, width = devices x streams per device, column {@code x} on stream
 * {@code x}; a task is one launch of the compute-bound kernel with {@code waitFor} on the events of its
 * dependencies in the timestep before, and a timestep's launches are submitted together. For each graph
 * the kernel's iteration count is swept over powers of two; every run prints Task Bench's lines
 * ({@code Total Tasks}, {@code Total FLOPs}, {@code Elapsed Time}, {@code FLOP/s}).
 *
 * <p>The anchor is the peak FLOP/s of the same kernel run directly through the CPU backend in this JVM
 * ({@link TaskBenchPeak}), measured warm before and after the graphs; the highest of them is the one peak of
 * the run (a graph measured against a lower one could seem to beat the kernel run alone). Task granularity =
 * elapsed x cores / tasks (Task Bench's definition; cores = the compute units of the devices used),
 * efficiency = FLOP/s / peak, and METG(50%) = the smallest granularity of a run reaching at least 50%
 * efficiency, per sweep; reported as the median over the sweeps with their range.
 */
@Command(name = "taskbench", sortOptions = false,
        description = {"Task Bench graphs (stencil_1d, nearest_0/1/3/5/9, spread_3, fft) through the session stream, "
                + "sweeping the compute-bound kernel's iterations; METG(50%%) against the kernel's peak run directly "
                + "in-process through the CPU backend.",
                "Writes runs.csv (every run), metg.csv, taskbench.txt (Task Bench's lines) and taskbench.png "
                        + "(efficiency vs granularity) into the results folder; the last line of stdout is: "
                        + "RESULT taskbench metg_stencil_1d_us=<median over the sweeps> metg_<graph>_us=.. peak_gflops=<highest "
                        + "of the peak measurements> peak_min_gflops=.. peak_max_gflops=.. width=.. sweeps=..",
                "--iterations is the number of sweeps over every graph and iteration count (default "
                        + TaskBenchScenario.DEFAULT_SWEEPS + "); --warmup the warm-up tasks before them (default "
                        + TaskBenchScenario.DEFAULT_WARMUP + "). The in-process peak is measured "
                        + TaskBenchScenario.PEAK_MEASUREMENTS + " times before the graphs and again after; a run above "
                        + "100%% of the highest fails the benchmark as a measurement error."})
final class TaskBenchScenario implements Scenario {

    static final int DEFAULT_WARMUP = 40_000;
    /** Sweeps over every graph and iteration count; METG is the median of theirs. */
    static final int DEFAULT_SWEEPS = 3;
    /** Timesteps submitted ahead of the oldest unfinished one: bounds the client's memory. */
    static final int WINDOW_STEPS = 512;
    /** The breakdown's longer tasks, in iterations as a power of two. */
    static final int BREAKDOWN_POWER = 15;
    /** The peak's task length in iterations: ~8 MFLOP, long enough that launching costs nothing. */
    static final long PEAK_ITERATIONS = 1 << 16;

    @Mixin
    BenchOptions options = new BenchOptions();

    @Option(names = "--devices", paramLabel = "SPEC", defaultValue = "cpu",
            description = "--devices of the daemon the benchmark starts (default: ${DEFAULT-VALUE}; e.g. cpu:2).")
    String devices;

    @Option(names = "--streams", paramLabel = "N",
            description = "Streams per device (default: the device's suggested number).")
    Integer streamsPerDevice;

    @Option(names = "--graphs", paramLabel = "LIST", split = ",",
            description = "Graphs to run (default: all of stencil_1d, nearest_0, nearest_1, nearest_3, nearest_5, "
                    + "nearest_9, spread_3, fft).")
    List<String> graphNames;

    @Option(names = "--min-power", paramLabel = "P", defaultValue = "0",
            description = "Smallest kernel iteration count, as a power of two (default: ${DEFAULT-VALUE}).")
    int minPower;

    @Option(names = "--max-power", paramLabel = "P", defaultValue = "17",
            description = "Largest kernel iteration count, as a power of two (default: ${DEFAULT-VALUE}).")
    int maxPower;

    @Option(names = "--target-ms", paramLabel = "MS", defaultValue = "250",
            description = "About how long each run lasts; sets its timesteps (default: ${DEFAULT-VALUE}).")
    int targetMillis;

    @Option(names = "--kernel", paramLabel = "KIND", defaultValue = "ir",
            description = "The compute-bound kernel as ir (portable IR, what a default daemon runs) or c (native C; "
                    + "the daemon this benchmark starts then allows native source; a --target daemon must) (default: ${DEFAULT-VALUE}).")
    String kernelKind;

    @Option(names = "--max-steps", paramLabel = "N", defaultValue = "20000",
            description = "Most timesteps of a run (default: ${DEFAULT-VALUE}).")
    int maxSteps;

    @Option(names = "--completion-linger-us", paramLabel = "US", defaultValue = "1000",
            description = "The session's completion linger in µs (0 to 10000; default: ${DEFAULT-VALUE}): a "
                    + "completion waits up to that long to leave with others while further tasks are in flight (the "
                    + "client waits only for the graph's end and its window); 0: each leaves at once.")
    int lingerMicros;

    @Option(names = "--daemon-arg", paramLabel = "ARG",
            description = "A further serve argument of the daemon the benchmark starts (repeatable; e.g. "
                    + "--daemon-arg=--cpu-nice=0 to run kernels at the daemon's priority).")
    List<String> daemonArgs = new ArrayList<>();

    @Spec
    CommandSpec spec;

    /** How the warm-up until the JITs were quiet went; null without a warm-up. */
    private JitWarmUp.Result warm;

    /** Peak measurements before the graphs, and again after them. */
    static final int PEAK_MEASUREMENTS = 3;

    /** Only with {@code --kernel c}. */
    @Override
    public boolean nativeSource() {
        return "c".equals(kernelKind);
    }

    @Override
    public String name() {
        return "taskbench";
    }

    @Override
    public BenchOptions options() {
        return options;
    }

    @Override
    public String daemonDevices() {
        return devices;
    }

    @Override
    public List<String> daemonArgs() {
        return daemonArgs;
    }

    /**
     * The daemon's {@code --cpu-nice} (the last one given with {@code --daemon-arg}, else the default): the peak's
     * kernels run as lowered as the daemon's, or a graph could beat the kernel run alone.
     */
    int cpuNice() {
        int nice = dev.arrayd.devices.cpu.CpuOptions.defaults().computeNice();
        for (int i = 0; i < daemonArgs.size(); i++) {
            String a = daemonArgs.get(i);
            String v = a.startsWith("--cpu-nice=") ? a.substring("--cpu-nice=".length())
                    : a.equals("--cpu-nice") && i + 1 < daemonArgs.size() ? daemonArgs.get(i + 1) : null;
            if (v != null) {
                try {
                    nice = Integer.parseInt(v.strip());
                } catch (NumberFormatException e) {
                    throw new ParameterException(spec.commandLine(), "--daemon-arg " + a + ": \"" + v
                            + "\" (expected: a nice value)");
                }
            }
        }
        return nice;
    }

    @Override
    public Report run(BenchContext ctx) throws Exception {
        int sweeps = options.iterations(DEFAULT_SWEEPS);
        int warmup = options.warmup(DEFAULT_WARMUP);
        List<TaskGraph> graphs = selectGraphs();
        if (minPower < 0 || maxPower > 30 || minPower > maxPower) {
            throw new ParameterException(spec.commandLine(), "--min-power/--max-power: " + minPower + "/" + maxPower
                    + " (expected: 0 <= min <= max <= 30)");
        }
        if (lingerMicros < 0 || lingerMicros > 10_000) {
            throw new ParameterException(spec.commandLine(), "--completion-linger-us: " + lingerMicros
                    + " (expected: 0 to 10000)");
        }
        if (targetMillis <= 0 || maxSteps <= 0) {
            throw new ParameterException(spec.commandLine(), "--target-ms and --max-steps: expected > 0");
        }
        Progress progress = ctx.progress();
        progress.update("taskbench: connecting to " + ctx.target());
        ManagedChannel channel = Channels.open(ctx);
        List<TaskBenchRun> runs = new ArrayList<>();
        List<String> log = new ArrayList<>();
        int width;
        int cores;
        double peak;
        double peakMin;
        double peakMax;
        List<String> deviceIds = new ArrayList<>();
        TaskBenchPeak peakRunner = null;
        TaskBenchBreakdown.Result breakdown;
        try (ArraydClient client = ArraydClient.builder().channel(channel).build();
             Session session = client.openSession("bench-taskbench", SessionOptions.defaults()
                     .completionLinger(Duration.ofNanos(1_000L * lingerMicros))).get(30, TimeUnit.SECONDS)) {
            List<DeviceInfo> cpus = client.devices().get(30, TimeUnit.SECONDS).stream()
                    .filter(d -> d.backend().equals("cpu")).toList();
            if (cpus.isEmpty()) {
                throw new IllegalStateException("the daemon has no cpu device (start it with --devices cpu)");
            }
            int perDevice = streamsPerDevice != null ? streamsPerDevice : Math.max(1, cpus.getFirst().suggestedStreams());
            if (perDevice <= 0) {
                throw new ParameterException(spec.commandLine(), "--streams: " + perDevice + " (expected: > 0)");
            }
            cores = cpus.stream().mapToInt(DeviceInfo::computeUnits).sum();

            if (!kernelKind.equals("ir") && !kernelKind.equals("c")) {
                throw new ParameterException(spec.commandLine(), "--kernel: \"" + kernelKind + "\" (expected: ir or c)");
            }
            boolean ir = kernelKind.equals("ir");
            peakRunner = new TaskBenchPeak(cpus.size(), perDevice, ir, cpuNice());

            progress.update("taskbench: compiling the kernel (" + kernelKind + ")");
            KernelModuleSpec module = ir ? KernelModuleSpec.ir(ComputeKernel.ir())
                    : KernelModuleSpec.of(Dialect.C, ComputeKernel.SOURCE, KernelSpec.entry(ComputeKernel.NAME)
                            .buffer("state", DType.F64, Access.READ_WRITE).scalar("iterations", DType.I64));
            KernelHandle kernel = session.compile(module.backend("cpu")).get(60, TimeUnit.SECONDS).get(ComputeKernel.NAME);
            List<StreamHandle> streams = new ArrayList<>();
            List<BufferHandle> states = new ArrayList<>();
            for (DeviceInfo d : cpus) {
                deviceIds.add(d.id());
                for (int s = 0; s < perDevice; s++) {
                    streams.add(session.createStream(d.id()).get(30, TimeUnit.SECONDS));
                    states.add(session.createBuffer(DType.F64, new long[] {ComputeKernel.STATE_DOUBLES},
                            BufferOptions.defaults().device(d.id()).zeroInit(true)).get(30, TimeUnit.SECONDS));
                }
            }
            width = streams.size();
            Runner runner = new Runner(session, kernel, streams, states);

            if (warmup > 0) {
                progress.update("taskbench: warm-up, " + warmup + " tasks");
                runner.run(graphs.getFirst(), 1, Math.max(1, warmup / width));
                // then tasks short and long (inline on the fast path, and through the stream workers and the
                // completion thread) until the JITs of both JVMs are quiet: a first sweep measured while the daemon
                // still compiles its worker path reads twice the overhead of the later ones
                TaskGraph g = graphs.getFirst();
                warm = JitWarmUp.run(progress, "taskbench", List.of(channel), List.of(), 1, options.warmupLimit(), () -> {
                    runner.run(g, 1, 200);
                    runner.run(g, 1L << 12, 100);
                    runner.run(g, 1L << 15, 30);
                });
                progress.line("taskbench: " + warm.describe());
            }
            // The peak, warm, several times before the graphs and again after them: every graph's efficiency is
            // against the same figure, the highest of them all (their spread is reported beside it).
            List<Double> peaks = new ArrayList<>();
            warmPeak(peakRunner, progress);
            measurePeaks(peakRunner, peaks, "before the graphs", cpus.size(), perDevice, progress);
            for (int sweep = 0; sweep < sweeps; sweep++) {
                for (TaskGraph g : graphs) {
                    double perColumnFlops = peaks.getFirst() / width;
                    for (int power = minPower; power <= maxPower; power++) {
                        long iterations = 1L << power;
                        // estimated wall time of a timestep: the kernel at peak plus ~10 µs of launching
                        double stepNanos = ComputeKernel.flopsPerTask(iterations) / perColumnFlops * 1e9 + 10_000;
                        int steps = (int) Math.clamp((long) (targetMillis * 1e6 / stepNanos), Math.min(10, maxSteps),
                                maxSteps);
                        progress.update(String.format(Locale.ROOT, "taskbench: sweep %d/%d, %s, iterations 2^%d, %d "
                                + "timesteps x %d", sweep + 1, sweeps, g.name(), power, steps, width));
                        long nanos = runner.run(g, iterations, steps);
                        long deps = countDependencies(g, steps, width);
                        long tasks = (long) steps * width;
                        runs.add(new TaskBenchRun(sweep, g.name(), iterations, steps, width, tasks, deps,
                                ComputeKernel.flopsPerTask(iterations) * tasks, nanos, cores, Double.NaN));
                    }
                    progress.line(String.format(Locale.ROOT, "taskbench: sweep %d/%d: %s done", sweep + 1, sweeps,
                            g.name()));
                }
            }
            int power = Math.clamp(BREAKDOWN_POWER, minPower, maxPower);
            breakdown = TaskBenchBreakdown.run(ctx, runner::run, graphs.getFirst(), power == minPower
                    ? new int[] {minPower} : new int[] {minPower, power}, width, cores,
                    peaks.stream().mapToDouble(Double::doubleValue).max().orElseThrow(), 4 * targetMillis,
                    4 * maxSteps, progress);
            measurePeaks(peakRunner, peaks, "after the graphs", cpus.size(), perDevice, progress);
            peakMin = peaks.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
            peakMax = peaks.stream().mapToDouble(Double::doubleValue).max().orElseThrow();
            peak = peakMax;
            progress.update("taskbench: closing");
        } finally {
            if (peakRunner != null) {
                peakRunner.close();
            }
        }
        progress.clear();
        double p = peak;
        List<TaskBenchRun> measured = runs.stream().map(r -> r.withPeak(p)).toList();
        for (TaskBenchRun r : measured) {
            log.addAll(r.taskBenchLines());
            log.add("");
        }
        return report(ctx, graphs, measured, log, width, cores, peak, peakMin, peakMax, sweeps, deviceIds, breakdown);
    }

    /**
     * Measures the in-process peak until two measurements in a row agree within 5% (at most 10): the daemon's
     * own warm-up (its JIT compiler threads) still takes the cores for a while after the warm-up tasks.
     */
    private void warmPeak(TaskBenchPeak runner, Progress progress) throws Exception {
        double prev = 0;
        for (int i = 0; i < 10; i++) {
            progress.update("taskbench: warming up the in-process peak, measurement " + (i + 1));
            double cur = runner.peakFlops(PEAK_ITERATIONS, Math.max(20_000_000L, targetMillis * 1_000_000L), 2);
            if (prev > 0 && Math.abs(cur - prev) <= 0.05 * cur) {
                return;
            }
            prev = cur;
        }
    }

    /** Adds {@link #PEAK_MEASUREMENTS} warm measurements of the in-process peak to {@code peaks}. */
    private void measurePeaks(TaskBenchPeak runner, List<Double> peaks, String when, int devices, int perDevice,
            Progress progress) throws Exception {
        for (int i = 0; i < PEAK_MEASUREMENTS; i++) {
            progress.update(String.format(Locale.ROOT, "taskbench: in-process peak %s, %d/%d (%d devices x %d streams, "
                    + "%d iterations per task)", when, i + 1, PEAK_MEASUREMENTS, devices, perDevice, PEAK_ITERATIONS));
            double p = runner.peakFlops(PEAK_ITERATIONS, Math.max(20_000_000L, targetMillis * 1_000_000L), 2);
            peaks.add(p);
            progress.line(String.format(Locale.ROOT, "taskbench: in-process peak %s: %.3f GFLOP/s", when, p / 1e9));
        }
    }

    private List<TaskGraph> selectGraphs() {
        List<TaskGraph> all = TaskGraph.standard();
        if (graphNames == null || graphNames.isEmpty()) {
            return all;
        }
        List<TaskGraph> out = new ArrayList<>();
        for (String n : graphNames) {
            out.add(all.stream().filter(g -> g.name().equals(n)).findFirst().orElseThrow(() -> new ParameterException(
                    spec.commandLine(), "--graphs: \"" + n + "\" (expected: one of "
                    + all.stream().map(TaskGraph::name).toList() + ")")));
        }
        return out;
    }

    static long countDependencies(TaskGraph g, int steps, int width) {
        long n = 0;
        for (int t = 0; t < steps; t++) {
            for (int x = 0; x < width; x++) {
                n += g.deps(t, x, width).length;
            }
        }
        return n;
    }

    /** Submits graphs through one session: launches by timestep, waiting on the events of the timestep before. */
    private static final class Runner {
        private final Session session;
        private final Launch[] base;

        Runner(Session session, KernelHandle kernel, List<StreamHandle> streams, List<BufferHandle> states) {
            this.session = session;
            this.base = new Launch[streams.size()];
            for (int x = 0; x < base.length; x++) {
                base[x] = Launch.of(kernel).global(1).on(streams.get(x));
            }
            this.states = states;
        }

        private final List<BufferHandle> states;

        /** Runs {@code steps} timesteps of {@code g}; returns the nanoseconds until the last task completed. */
        long run(TaskGraph g, long iterations, int steps) throws Exception {
            int width = base.length;
            Launch[] withArgs = new Launch[width];
            for (int x = 0; x < width; x++) {
                withArgs[x] = base[x].args(states.get(x), iterations);
            }
            // the dependencies repeat with the pattern's period; computed once per run, not per task
            int period = switch (g.pattern()) {
                case STENCIL_1D, NEAREST -> 1;
                case SPREAD -> width;
                case FFT -> Math.max(1, 31 - Integer.numberOfLeadingZeros(width));
            };
            int[][][] deps = new int[period][width][];
            for (int k = 0; k < period; k++) {
                for (int x = 0; x < width; x++) {
                    deps[k][x] = g.deps(k + 1, x, width);
                }
            }
            Event[][] ring = new Event[Math.min(WINDOW_STEPS, steps)][];
            Event[] prev = null;
            long t0 = System.nanoTime();
            for (int t = 0; t < steps; t++) {
                int slot = t % ring.length;
                if (ring[slot] != null) {
                    for (Event e : ring[slot]) {
                        e.future().get();
                    }
                }
                List<Launch> step = new ArrayList<>(width);
                for (int x = 0; x < width; x++) {
                    Launch l = withArgs[x];
                    if (prev != null) {
                        int[] d = deps[(t - 1) % period][x];
                        Event[] wait = new Event[d.length];
                        for (int i = 0; i < d.length; i++) {
                            wait[i] = prev[d[i]];
                        }
                        l = l.waitFor(wait);
                    }
                    step.add(l);
                }
                // a timestep leaves in one batch: one message instead of one per task
                Event[] cur = session.launchAll(step).toArray(Event[]::new);
                ring[slot] = cur;
                prev = cur;
            }
            // each column runs in order on its stream: its last task completing means all of it did
            for (Event e : prev) {
                e.future().get();
            }
            return System.nanoTime() - t0;
        }
    }

    private Report report(BenchContext ctx, List<TaskGraph> graphs, List<TaskBenchRun> runs, List<String> log, int width,
            int cores, double peak, double peakMin, double peakMax, int sweeps, List<String> deviceIds,
            TaskBenchBreakdown.Result breakdown)
            throws Exception {
        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("runs.csv"))) {
            w.write("sweep,graph,iterations,timesteps,width,tasks,dependencies,flops,elapsed_s,flops_per_s,granularity_us,"
                    + "efficiency\n");
            for (TaskBenchRun r : runs) {
                w.write(String.format(Locale.ROOT, "%d,%s,%d,%d,%d,%d,%d,%d,%.6f,%.1f,%.3f,%.6f%n", r.sweep() + 1, r.graph(),
                        r.iterations(), r.timesteps(), r.width(), r.tasks(), r.dependencies(), r.flops(), r.nanos() / 1e9,
                        r.flopsPerSecond(), r.granularityMicros(), r.efficiency()));
            }
        }
        Files.write(ctx.outDir().resolve("taskbench.txt"), log);
        // an efficiency above 100% means the peak was measured wrong: no figure of this run can be trusted
        for (TaskBenchRun r : runs) {
            if (r.efficiency() > 1.0) {
                throw new IllegalStateException(String.format(Locale.ROOT, "measurement error: %s at 2^%d iterations "
                                + "(sweep %d) ran at %.1f%% of the peak (%.3f GFLOP/s against the peak %.3f, measured "
                                + "%.3f..%.3f); see runs.csv and taskbench.txt in %s", r.graph(),
                        63 - Long.numberOfLeadingZeros(r.iterations()), r.sweep() + 1, 100 * r.efficiency(),
                        r.flopsPerSecond() / 1e9, peak / 1e9, peakMin / 1e9, peakMax / 1e9, ctx.outDir()));
            }
        }
        Map<String, TaskBenchMetg> metgs = new LinkedHashMap<>();
        LineChart chart = new LineChart(String.format(Locale.ROOT,
                "Task Bench through arrayd (width %d, %d cores): efficiency vs task granularity (median of %d sweeps)",
                width, cores, sweeps), "task granularity (µs)", "efficiency vs in-process peak (%)")
                .reference(50, "50% (METG)");
        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("metg.csv"))) {
            w.write("graph,metg50_us_median,metg50_us_min,metg50_us_max,sweeps_reaching,best_efficiency\n");
            for (TaskGraph g : graphs) {
                TaskBenchMetg m = TaskBenchMetg.overSweeps(runs, g.name(), sweeps);
                metgs.put(g.name(), m);
                w.write(String.format(Locale.ROOT, "%s,%s,%s,%s,%d,%.4f%n", g.name(), csv(m.medianMicros()),
                        csv(m.minMicros()), csv(m.maxMicros()), m.reached(), m.bestEfficiency()));
                // the curve: each iteration count's median granularity and efficiency over the sweeps
                List<Long> counts = runs.stream().filter(r -> r.graph().equals(g.name())).map(TaskBenchRun::iterations).distinct()
                        .sorted().toList();
                double[] gran = new double[counts.size()];
                double[] eff = new double[counts.size()];
                for (int i = 0; i < counts.size(); i++) {
                    long it = counts.get(i);
                    List<TaskBenchRun> at = runs.stream().filter(r -> r.graph().equals(g.name()) && r.iterations() == it).toList();
                    gran[i] = ThroughputScenario.median(at.stream().mapToDouble(TaskBenchRun::granularityMicros).toArray());
                    eff[i] = 100 * ThroughputScenario.median(at.stream().mapToDouble(TaskBenchRun::efficiency).toArray());
                }
                chart.add(g.name(), gran, eff);
            }
        }
        chart.writePng(ctx.outDir().resolve("taskbench.png"));

        StringBuilder result = new StringBuilder();
        for (Map.Entry<String, TaskBenchMetg> e : metgs.entrySet()) {
            result.append("metg_").append(e.getKey()).append("_us=").append(Double.isNaN(e.getValue().medianMicros())
                    ? "NaN" : String.format(Locale.ROOT, "%.1f", e.getValue().medianMicros())).append(' ');
        }
        result.append(String.format(Locale.ROOT, "peak_gflops=%.3f peak_min_gflops=%.3f peak_max_gflops=%.3f width=%d "
                + "sweeps=%d kernel=%s", peak / 1e9, peakMin / 1e9, peakMax / 1e9, width, sweeps, kernelKind));

        List<String> lines = new ArrayList<>(log);
        lines.add(String.format(Locale.ROOT, "taskbench: %s daemon at %s, devices %s, width %d, %d cores, in-process "
                        + "peak %.3f GFLOP/s (%.3f..%.3f over %d measurements), %d sweeps",
                ctx.inProcess() ? "in-process" : "separate-process", ctx.target(), deviceIds, width, cores, peak / 1e9,
                peakMin / 1e9, peakMax / 1e9, 2 * PEAK_MEASUREMENTS, sweeps));
        lines.add(String.format(Locale.ROOT, "%-12s %14s %20s %16s", "graph", "METG(50%)_us", "range_us", "best_efficiency"));
        StringBuilder table = new StringBuilder();
        for (TaskGraph g : graphs) {
            TaskBenchMetg m = metgs.get(g.name());
            String range = m.reached() == 0 ? "–" : String.format(Locale.ROOT, "%.1f–%.1f (%d of %d)", m.minMicros(),
                    m.maxMicros(), m.reached(), sweeps);
            lines.add(String.format(Locale.ROOT, "%-12s %14s %20s %15.1f%%", g.name(), m.median(), range,
                    100 * m.bestEfficiency()));
            table.append(String.format(Locale.ROOT, "| %s | %s | %s | %.0f%% |%n", g.name(), m.median(), range,
                    100 * m.bestEfficiency()));
        }
        String breakdownSection = breakdown.write(ctx.outDir(), lines, result, 4 * targetMillis);
        lines.add("results: " + ctx.outDir());

        String section = String.format(Locale.ROOT, """
                Task Bench's graphs (Slaughter et al., SC'20) through the daemon: width %d (devices %s x %d \
                streams, column x on stream x), each task one launch of the compute-bound kernel, written %s \
                (`a = a * a + a` on 64 doubles, `iterations` times; %s FLOPs per task as Task Bench counts them) \
                with `waitFor` on its dependencies' events of the timestep before; each timestep is sent as one \
                batch (`Session.launchAll`) from one client thread. The kernel's iterations are swept over \
                2^%d..2^%d, each run lasting about %d ms; the whole sweep over every graph is done %d times. \
                Before them: %s.

                **Anchor:** the same kernel run directly through the CPU backend in the benchmark's JVM (no \
                daemon, no scheduler, no gRPC; its kernels lowered by nice %d, as the daemon's are), %d tasks at a \
                time of 2^16 iterations, measured %d times before \
                the graphs (once two warm-up measurements in a row agree within 5%%) and %d times after them; \
                every graph's efficiency is against the highest of \
                those, **%.2f GFLOP/s** (measured %.2f..%.2f). Task granularity = elapsed x %d cores / tasks; \
                efficiency = FLOP/s / that peak; METG(50%%) = the smallest granularity of a run with at least 50%% \
                efficiency, per sweep; the table gives the median over the sweeps (a sweep that never reaches 50%% \
                counts as never) and the range of those that did. A run above 100%% of the peak fails the whole \
                benchmark as a measurement error.

                | graph | METG(50%%) µs, median | range of the sweeps | best efficiency (median) |
                | --- | --- | --- | --- |
                %s
                For scale, Task Bench reports METG(50%%) for stencil_1d of 739 µs (StarPU), 79 µs (PaRSEC), \
                59 µs (Realm) and 186 ms (Dask), on their machines.

                ![Task Bench efficiency vs granularity](taskbench.png)

                Every run's Task Bench lines (`Total Tasks`, `Total FLOPs`, `Elapsed Time`, `FLOP/s`) are in \
                `taskbench.txt` of the results folder, and in `runs.csv`.

                ### Where a task's time goes

                %s""", width, deviceIds, width / Math.max(1, deviceIds.size()), kernelKind.equals("ir")
                        ? "in the portable IR (`--kernel ir`, the default: what a daemon with default flags runs)"
                        : "in native C (`--kernel c`)", "2·64·iterations + 64", minPower,
                maxPower, targetMillis, sweeps, warm == null ? "no warm-up (`--warmup 0`)" : "the first graph's tasks of "
                        + "1 iteration, then of 1, 2^12 and 2^15 iterations in rounds; " + warm.describe(), cpuNice(),
                width, PEAK_MEASUREMENTS, PEAK_MEASUREMENTS, peak / 1e9, peakMin / 1e9, peakMax / 1e9, cores, table,
                breakdownSection);
        if (!daemonArgs.isEmpty()) {
            section = "The daemon ran with `" + String.join(" ", daemonArgs) + "`.\n\n" + section;
            result.append(" daemon_args=").append(String.join(",", daemonArgs).replace(' ', '_'));
        }
        section = (lingerMicros > 0 ? "The session's completions linger up to " + lingerMicros + " µs while other "
                + "tasks are in flight (`--completion-linger-us`, a session option: fewer messages and wake-ups; the "
                + "client waits only for its window and the graph's end).\n\n"
                : "Each completion leaves the daemon at once (`--completion-linger-us 0`).\n\n") + section;
        result.append(" completion_linger_us=").append(lingerMicros);
        return new Report(lines, result.toString().trim(), section);
    }

    private static String csv(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.3f", v);
    }
}
