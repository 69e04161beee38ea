package dev.arrayd.benchmarks;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BackendInfo;
import dev.arrayd.client.DeviceInfo;
import dev.arrayd.client.DeviceInventory;
import dev.arrayd.client.Session;
import io.grpc.ManagedChannel;
import java.io.BufferedWriter;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code bench kernels}: the same kernels (vadd, saxpy, a two-pass sum, a register-tiled 512 x 512
 * matmul, row softmax) in three columns, in one run: through arrayd on its CPU device (C), through
 * arrayd on an OpenCL device (OpenCL C), and the same OpenCL C directly through JOCL in this process
 * ({@link JoclKernelColumn}: no daemon). Then the launch round trip of an empty kernel through arrayd on
 * the OpenCL device (and the CPU device, for scale) next to a direct JOCL enqueue + {@code clFinish}.
 *
 * <p>Kernels are native source ({@link BenchKernels}), the same OpenCL C in every OpenCL column. Every
 * column's output is checked against a Java reference before it is timed. Columns alternate in rounds
 * so that drift of the machine lands on all of them. A kernel's rate is computed from its median device
 * time (what the device reports it spent, so the comparison is of the kernels, not of the paths to
 * them); the time a caller waits per launch is reported beside it.
 *
 * <p>PoCL reads {@code POCL_DEVICES} and {@code POCL_CACHE_DIR} from the environment; the daemon child
 * inherits this process's, so the daemon and the direct column see the same devices.
 */
@Command(name = "kernels", sortOptions = false,
        description = {"The same kernels (vadd, saxpy, sum, tiled matmul, softmax) through arrayd on its CPU device, "
                + "through arrayd on an OpenCL device, and directly through JOCL in-process; then the empty-kernel "
                + "launch round trip through arrayd vs a direct JOCL enqueue+finish.",
                "Without an OpenCL platform only the CPU column runs, and the report says so.",
                "PoCL: set POCL_DEVICES (e.g. \"basic basic\" or \"pthread\") and POCL_CACHE_DIR before running; the "
                        + "daemon child inherits them.",
                "Writes kernels.csv (every run), summary.csv, roundtrip.csv, kernels.png and roundtrip.png into the "
                        + "results folder; the last line of stdout is: RESULT kernels <kernel>_<column>_<GBps|GFLOPs>=.. "
                        + "launch_cpu_us=.. launch_opencl_us=.. jocl_enqueue_us=.. launch_ratio=..",
                "Defaults: --iterations " + KernelsScenario.DEFAULT_ITERATIONS + " timed runs per kernel and column, "
                        + "--warmup " + KernelsScenario.DEFAULT_WARMUP + " runs at least, then on until the JITs are "
                        + "quiet (at most --warmup-seconds per kernel)."})
final class KernelsScenario implements Scenario {

    static final int DEFAULT_ITERATIONS = 30;
    static final int DEFAULT_WARMUP = 5;
    static final int ROUNDS = 5;
    static final long SEED = 20261122L;

    static final String CPU = "cpu";
    static final String OPENCL = "opencl";
    static final String JOCL = "jocl";
    static final String CPU_IR = "cpu_ir";
    /** The IR kernels with every kernel strict (no relaxed_math): what the relaxed sum gains. */
    static final String CPU_IR_STRICT = "cpu_ir_strict";
    static final String OPENCL_IR = "opencl_ir";

    /** How each kernel's warm-up went, by kernel name. */
    private final Map<String, JitWarmUp.Result> warmUps = new LinkedHashMap<>();

    @Mixin
    BenchOptions options = new BenchOptions();

    @Option(names = "--round-trips", paramLabel = "N", defaultValue = "5000",
            description = "Empty-kernel round trips per column, after as many for warm-up (default: ${DEFAULT-VALUE}).")
    int roundTrips;

    @Option(names = "--opencl-device", paramLabel = "N", defaultValue = "0",
            description = "Which OpenCL device (opencl:N) runs the OpenCL columns (default: ${DEFAULT-VALUE}).")
    int openClIndex;

    @Option(names = "--small", hidden = true, description = "Tiny problem sizes (for tests).")
    boolean small;

    @Spec
    CommandSpec spec;

    /** One kernel's result in one column. */
    record Cell(KernelWorkload workload, String column, long[] wall, long[] device) {
        double medianWallMicros() {
            return Summary.ofNanos(wall).median();
        }

        /** Median device time; the wall time when the device reported none. */
        double medianDeviceMicros() {
            double d = Summary.ofNanos(device).median();
            return d > 0 ? d : medianWallMicros();
        }

        double rate() {
            return workload.rate(medianDeviceMicros() * 1e3);
        }
    }

    /** Its columns are native C and OpenCL C (the portable IR's kernels are not among them). */
    @Override
    public boolean nativeSource() {
        return true;
    }

    @Override
    public String name() {
        return "kernels";
    }

    @Override
    public BenchOptions options() {
        return options;
    }

    @Override
    public String daemonDevices() {
        return "cpu,opencl";
    }

    @Override
    public Report run(BenchContext ctx) throws Exception {
        int iterations = options.iterations(DEFAULT_ITERATIONS);
        int warmup = options.warmup(DEFAULT_WARMUP);
        if (roundTrips <= 0 || openClIndex < 0) {
            throw new ParameterException(spec.commandLine(), roundTrips <= 0
                    ? "--round-trips: " + roundTrips + " (expected: > 0)"
                    : "--opencl-device: " + openClIndex + " (expected: >= 0)");
        }
        Progress progress = ctx.progress();
        KernelWorkload.Sizes sizes = small ? KernelWorkload.SMALL : KernelWorkload.FULL;
        progress.update("kernels: preparing inputs and reference results");
        List<KernelWorkload> workloads = KernelWorkload.all(sizes, SEED);

        progress.update("kernels: connecting to " + ctx.target());
        ManagedChannel channel = Channels.open(ctx);
        List<Cell> cells = new ArrayList<>();
        Map<String, long[]> trips = new LinkedHashMap<>();
        Map<String, String> labels = new LinkedHashMap<>();
        List<String> skipped = new ArrayList<>();
        String cpuDevice;
        String openClDevice = null;
        try (ArraydClient client = ArraydClient.builder().channel(channel).build();
             Session session = client.openSession("bench-kernels").get(30, TimeUnit.SECONDS)) {
            DeviceInventory inventory = client.inventory().get(30, TimeUnit.SECONDS);
            cpuDevice = LatencyScenario.cpuDevice(inventory.devices());
            Optional<DeviceInfo> cl = inventory.devices().stream().filter(d -> d.backend().equals(OPENCL))
                    .filter(d -> d.id().equals(OPENCL + ":" + openClIndex)).findFirst();
            List<KernelColumn> columns = new ArrayList<>();
            try {
                DeviceInfo cpuInfo = inventory.devices().stream().filter(d -> d.id().equals(cpuDevice)).findFirst()
                        .orElseThrow();
                progress.update("kernels: compiling C for " + cpuDevice);
                columns.add(new ArraydKernelColumn(CPU, String.format(Locale.ROOT, "arrayd %s (C, %d threads)",
                        cpuDevice, cpuInfo.computeUnits()), session, CPU, cpuDevice));
                progress.update("kernels: compiling IR for " + cpuDevice);
                columns.add(new ArraydKernelColumn(CPU_IR, String.format(Locale.ROOT, "arrayd %s (IR, %d threads)",
                        cpuDevice, cpuInfo.computeUnits()), session, IrBenchKernels.module(CPU, true), cpuDevice));
                progress.update("kernels: compiling strict IR for " + cpuDevice);
                columns.add(new ArraydKernelColumn(CPU_IR_STRICT, String.format(Locale.ROOT,
                        "arrayd %s (IR, every kernel strict, %d threads)", cpuDevice, cpuInfo.computeUnits()), session,
                        IrBenchKernels.module(CPU, false), cpuDevice));
                if (cl.isEmpty()) {
                    skipped.add("the OpenCL columns did not run: " + openClMissing(inventory));
                } else {
                    openClDevice = cl.get().id();
                    progress.update("kernels: compiling OpenCL C for " + openClDevice);
                    columns.add(new ArraydKernelColumn(OPENCL, "arrayd " + openClDevice + " (" + cl.get().name() + ")",
                            session, OPENCL, openClDevice));
                    progress.update("kernels: compiling IR for " + openClDevice);
                    columns.add(new ArraydKernelColumn(OPENCL_IR, "arrayd " + openClDevice + " (IR, " + cl.get().name() + ")",
                            session, IrBenchKernels.module(OPENCL, true), openClDevice));
                    Optional<String> direct = OpenClProbe.unavailableReason();
                    if (direct.isPresent()) {
                        skipped.add("the direct JOCL column did not run: " + direct.get());
                    } else {
                        progress.update("kernels: building the plain OpenCL C through JOCL");
                        columns.add(new JoclKernelColumn(JOCL, openClIndex));
                    }
                }
                for (KernelColumn c : columns) {
                    labels.put(c.key(), c.label());
                }
                for (KernelWorkload w : workloads) {
                    cells.addAll(measure(w, columns, iterations, warmup, channel, progress));
                }
                // the strict IR column launches on the same path as cpu_ir: one round trip figure for both
                trips.putAll(roundTrips(columns.stream().filter(c -> !c.key().equals(CPU_IR_STRICT)).toList(), progress));
            } finally {
                for (KernelColumn c : columns) {
                    c.close();
                }
            }
            progress.update("kernels: closing");
        }
        progress.clear();
        return report(ctx, workloads, cells, trips, labels, skipped, cpuDevice, openClDevice, iterations, warmup);
    }

    /** Why the daemon has no OpenCL device to use: its backend's reason, or the devices it has. */
    private String openClMissing(DeviceInventory inventory) {
        Optional<BackendInfo> b = inventory.backends().stream().filter(x -> x.name().equals(OPENCL)).findFirst();
        if (b.isPresent() && !b.get().available()) {
            return "the daemon's OpenCL backend is unavailable (" + b.get().reason() + ")";
        }
        if (b.isEmpty()) {
            return "the daemon runs no OpenCL backend (start it with --devices cpu,opencl)";
        }
        return "the daemon has no device opencl:" + openClIndex + " (it has " + b.get().devices() + ")";
    }

    /**
     * Checks, warms up and times one kernel in every column, the columns taking turns in rounds. The warm-up
     * runs every column in turn, at least {@code warmup} times, until the JITs of the daemon and of this process
     * (the client and the direct JOCL column) are quiet ({@link JitWarmUp}): a compiler thread busy on one of
     * the two cores would take it from the kernels being timed.
     */
    private List<Cell> measure(KernelWorkload w, List<KernelColumn> columns, int iterations, int warmup,
            ManagedChannel channel, Progress progress) throws Exception {
        for (KernelColumn c : columns) {
            progress.update("kernels: " + w.name() + ": checking " + c.key());
            c.prepare(w);
            float[] got = c.runOnceAndRead(w);
            int bad = w.firstMismatch(got);
            if (bad >= 0) {
                throw new IllegalStateException(String.format(Locale.ROOT, "%s on %s: element %d is %s (expected: %s)",
                        w.name(), c.label(), bad, bad < got.length ? Float.toString(got[bad]) : "missing",
                        Float.toString(w.expected()[bad])));
            }
        }
        JitWarmUp.Result warm = JitWarmUp.run(progress, "kernels: " + w.name(), List.of(channel), List.of(), warmup,
                options.warmupLimit(), () -> {
                    for (KernelColumn c : columns) {
                        c.run();
                    }
                });
        warmUps.put(w.name(), warm);
        progress.line("kernels: " + w.name() + ": " + warm.describe());
        int rounds = Math.min(ROUNDS, iterations);
        Map<String, long[]> wall = new LinkedHashMap<>();
        Map<String, long[]> device = new LinkedHashMap<>();
        for (KernelColumn c : columns) {
            wall.put(c.key(), new long[iterations]);
            device.put(c.key(), new long[iterations]);
        }
        int[] done = new int[columns.size()];
        for (int r = 0; r < rounds; r++) {
            int n = iterations / rounds + (r < iterations % rounds ? 1 : 0);
            for (int k = 0; k < columns.size(); k++) {
                int ci = (k + r) % columns.size();
                KernelColumn c = columns.get(ci);
                progress.update(String.format(Locale.ROOT, "kernels: %s: round %d/%d %s x%d", w.name(), r + 1, rounds,
                        c.key(), n));
                for (int i = 0; i < n; i++) {
                    LaunchTime t = c.run();
                    wall.get(c.key())[done[ci]] = t.wallNanos();
                    device.get(c.key())[done[ci]++] = t.deviceNanos();
                }
            }
        }
        List<Cell> cells = new ArrayList<>();
        StringBuilder line = new StringBuilder("kernels: " + w.name() + ":");
        for (KernelColumn c : columns) {
            Cell cell = new Cell(w, c.key(), wall.get(c.key()), device.get(c.key()));
            cells.add(cell);
            line.append(String.format(Locale.ROOT, " %s %.1f µs (%.2f %s)", c.key(), cell.medianDeviceMicros(),
                    cell.rate(), w.unit()));
        }
        progress.line(line.toString());
        return cells;
    }

    /** Empty-kernel round trips per column: a warm-up of as many, then rounds taking turns. */
    private Map<String, long[]> roundTrips(List<KernelColumn> columns, Progress progress) throws Exception {
        Map<String, long[]> out = new LinkedHashMap<>();
        for (KernelColumn c : columns) {
            progress.update("kernels: round trip warm-up " + c.key() + " x" + roundTrips);
            for (int i = 0; i < roundTrips; i++) {
                c.emptyRoundTripNanos();
            }
            out.put(c.key(), new long[roundTrips]);
        }
        int rounds = Math.min(ROUNDS, roundTrips);
        int[] done = new int[columns.size()];
        for (int r = 0; r < rounds; r++) {
            int n = roundTrips / rounds + (r < roundTrips % rounds ? 1 : 0);
            for (int k = 0; k < columns.size(); k++) {
                int ci = (k + r) % columns.size();
                KernelColumn c = columns.get(ci);
                progress.update(String.format(Locale.ROOT, "kernels: round trip round %d/%d %s x%d", r + 1, rounds,
                        c.key(), n));
                long[] samples = out.get(c.key());
                for (int i = 0; i < n; i++) {
                    samples[done[ci]++] = c.emptyRoundTripNanos();
                }
            }
        }
        StringBuilder line = new StringBuilder("kernels: empty-kernel round trip medians:");
        out.forEach((k, v) -> line.append(String.format(Locale.ROOT, " %s %.1f µs", k, Summary.ofNanos(v).median())));
        progress.line(line.toString());
        return out;
    }

    private static String rateKey(KernelWorkload w) {
        return w.computeBound() ? "GFLOPs" : "GBps";
    }

    private Report report(BenchContext ctx, List<KernelWorkload> workloads, List<Cell> cells, Map<String, long[]> trips,
            Map<String, String> labels, List<String> skipped, String cpuDevice, String openClDevice, int iterations,
            int warmup) throws Exception {
        List<String> keys = new ArrayList<>(labels.keySet());
        Map<String, Map<String, Cell>> byKernel = new LinkedHashMap<>();
        for (Cell c : cells) {
            byKernel.computeIfAbsent(c.workload().name(), k -> new LinkedHashMap<>()).put(c.column(), c);
        }

        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("kernels.csv"))) {
            w.write("kernel,column,run,wall_us,device_us\n");
            for (Cell c : cells) {
                for (int i = 0; i < c.wall().length; i++) {
                    w.write(String.format(Locale.ROOT, "%s,%s,%d,%.3f,%.3f%n", c.workload().name(), c.column(), i + 1,
                            c.wall()[i] / 1e3, c.device()[i] / 1e3));
                }
            }
        }
        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("summary.csv"))) {
            w.write("kernel,column,device,runs,median_wall_us,median_device_us,rate,unit,rate_ratio_to_jocl\n");
            for (Cell c : cells) {
                Cell anchor = byKernel.get(c.workload().name()).get(JOCL);
                w.write(String.format(Locale.ROOT, "%s,%s,%s,%d,%.3f,%.3f,%.3f,%s,%s%n", c.workload().name(), c.column(),
                        csvSafe(labels.get(c.column())), c.wall().length, c.medianWallMicros(), c.medianDeviceMicros(),
                        c.rate(), c.workload().unit(),
                        anchor == null ? "" : String.format(Locale.ROOT, "%.4f", c.rate() / anchor.rate())));
            }
        }
        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("roundtrip.csv"))) {
            w.write("column,iteration,micros\n");
            for (Map.Entry<String, long[]> e : trips.entrySet()) {
                for (int i = 0; i < e.getValue().length; i++) {
                    w.write(String.format(Locale.ROOT, "%s,%d,%.3f%n", e.getKey(), i + 1, e.getValue()[i] / 1e3));
                }
            }
        }

        List<String> categories = workloads.stream().map(x -> x.name() + " (" + x.unit() + ")").toList();
        BarChart chart = new BarChart(String.format(Locale.ROOT, "Kernel rates from median device time (%d runs each)",
                iterations), "GB/s or GFLOP/s", categories);
        for (String k : keys) {
            chart.add(legend(k, cpuDevice, openClDevice), workloads.stream().map(x -> byKernel.get(x.name()).get(k).rate()).toList());
        }
        chart.writePng(ctx.outDir().resolve("kernels.png"));
        Map<String, Double> tripMedian = new LinkedHashMap<>();
        trips.forEach((k, v) -> tripMedian.put(k, Summary.ofNanos(v).median()));
        BarChart tripChart = new BarChart(String.format(Locale.ROOT, "Empty-kernel round trip, median of %,d",
                roundTrips), "µs", List.of("launch + wait"));
        for (String k : keys) {
            if (!tripMedian.containsKey(k)) {
                continue;
            }
            tripChart.add(legend(k, cpuDevice, openClDevice), List.of(tripMedian.get(k)));
        }
        tripChart.writePng(ctx.outDir().resolve("roundtrip.png"));

        // RESULT: a rate per kernel and column, the round trips, and how many kernels the CPU wins
        StringBuilder result = new StringBuilder();
        int cpuWins = 0;
        int irWins = 0;
        int compared = 0;
        for (KernelWorkload w : workloads) {
            Map<String, Cell> row = byKernel.get(w.name());
            for (String k : keys) {
                result.append(String.format(Locale.ROOT, "%s_%s_%s=%.2f ", w.name(), k, rateKey(w), row.get(k).rate()));
            }
            Cell pocl = row.containsKey(JOCL) ? row.get(JOCL) : row.get(OPENCL);
            if (pocl != null) {
                compared++;
                if (row.get(CPU).rate() >= pocl.rate()) {
                    cpuWins++;
                }
                if (row.get(CPU_IR).rate() >= pocl.rate()) {
                    irWins++;
                }
            }
        }
        for (String k : tripMedian.keySet()) {
            String name = k.equals(JOCL) ? "jocl_enqueue_us" : "launch_" + k + "_us";
            result.append(String.format(Locale.ROOT, "%s=%.1f ", name, tripMedian.get(k)));
        }
        if (tripMedian.containsKey(OPENCL) && tripMedian.containsKey(JOCL)) {
            result.append(String.format(Locale.ROOT, "launch_ratio=%.3f ", tripMedian.get(OPENCL) / tripMedian.get(JOCL)));
        }
        if (openClDevice == null) {
            result.append("opencl=none");
        } else {
            result.append(String.format(Locale.ROOT, "cpu_at_least_pocl=%d/%d cpu_ir_at_least_pocl=%d/%d", cpuWins, compared,
                    irWins, compared));
        }

        String pocl = System.getenv("POCL_DEVICES");
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "kernels: %s daemon at %s, %d timed runs per kernel and column after at least %d warm-up runs, "
                        + "POCL_DEVICES=%s", ctx.inProcess() ? "in-process" : "separate-process", ctx.target(), iterations,
                warmup, pocl == null ? "(unset)" : pocl));
        keys.forEach(k -> lines.add("  " + k + ": " + labels.get(k)));
        skipped.forEach(s -> lines.add("  " + s));
        StringBuilder head = new StringBuilder(String.format(Locale.ROOT, "%-8s %-8s", "kernel", "unit"));
        for (String k : keys) {
            head.append(String.format(Locale.ROOT, " %22s", k + " wall/dev µs"));
            head.append(String.format(Locale.ROOT, " %10s", k + " rate"));
        }
        lines.add(head.toString());
        for (KernelWorkload w : workloads) {
            StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%-8s %-8s", w.name(), w.unit()));
            for (String k : keys) {
                Cell c = byKernel.get(w.name()).get(k);
                b.append(String.format(Locale.ROOT, " %22s", String.format(Locale.ROOT, "%.1f / %.1f",
                        c.medianWallMicros(), c.medianDeviceMicros())));
                b.append(String.format(Locale.ROOT, " %10.2f", c.rate()));
            }
            lines.add(b.toString());
        }
        StringBuilder trip = new StringBuilder("empty-kernel round trip medians:");
        tripMedian.forEach((k, v) -> trip.append(String.format(Locale.ROOT, " %s %.1f µs", k, v)));
        lines.add(trip.toString());
        lines.add("results: " + ctx.outDir());

        return new Report(lines, result.toString().trim(),
                section(workloads, byKernel, keys, labels, skipped, tripMedian, cpuDevice, openClDevice, iterations,
                        warmup, pocl));
    }

    /** e.g. "vadd 31.2 s, saxpy 5.1 s, ...; every one ended quiet", or which ones the time limit stopped. */
    private String warmUpSummary() {
        StringBuilder b = new StringBuilder();
        List<String> loud = new ArrayList<>();
        warmUps.forEach((k, r) -> {
            b.append(b.isEmpty() ? "" : ", ").append(String.format(Locale.ROOT, "%s %.1f s", k, r.seconds()));
            if (!r.quiet()) {
                loud.add(k);
            }
        });
        return b + (loud.isEmpty() ? "; every one ended quiet" : "; stopped by the time limit with a JIT still compiling: "
                + String.join(", ", loud));
    }

    private String section(List<KernelWorkload> workloads, Map<String, Map<String, Cell>> byKernel, List<String> keys,
            Map<String, String> labels, List<String> skipped, Map<String, Double> trip, String cpuDevice,
            String openClDevice, int iterations, int warmup, String pocl) {
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, """
                The same kernels in up to six columns, in one run, each checked against a Java reference before \
                it is timed; %d timed runs per kernel and column, the columns taking turns in %d rounds, after a \
                warm-up of at least %d runs of every column that lasts until the JITs of the daemon and of the \
                benchmark are quiet (%s). %s.

                """, iterations, Math.min(ROUNDS, iterations), warmup, warmUpSummary(),
                pocl == null ? "`POCL_DEVICES` unset" : "`POCL_DEVICES=" + pocl + "`"));
        for (String k : keys) {
            s.append("- **").append(k).append(":** ").append(labels.get(k)).append(switch (k) {
                case CPU -> ": C source compiled by the daemon with gcc, launched on the session stream;";
                case CPU_IR -> ": the same kernels in the portable IR (`IrBenchKernels`), rendered to C by the daemon, "
                        + "launched on the session stream; the sum's first pass allows relaxed floating point "
                        + "(`relaxedMath()`: reassociation), the others are strict;";
                case CPU_IR_STRICT -> ": the same IR with every kernel strict (each float operation rounded once, in "
                        + "order), what the relaxed ones are compared with;";
                case OPENCL -> ": OpenCL C (`ARRAYD_KERNEL` functions, wrapped by arrayd), launched on the session "
                        + "stream;";
                case OPENCL_IR -> ": the same IR rendered to OpenCL C by the daemon, launched on the session stream "
                        + "(OpenCL keeps the strict order of relaxed kernels);";
                default -> ": the same OpenCL C as plain `__kernel` functions, run in the benchmark's JVM with its own "
                        + "context, queue and buffers: `clEnqueueNDRangeKernel` per pass, then `clFinish` (the anchor).";
            }).append('\n');
        }
        for (String sk : skipped) {
            s.append("\n**Note:** ").append(sk).append(".\n");
        }
        s.append("\nKernels: ");
        s.append(String.join("; ", workloads.stream().map(w -> "**" + w.name() + "** " + w.what()).toList()));
        s.append(".\n\nRates are from the median device time (arrayd's per-command device time; OpenCL profiling for "
                + "JOCL); *wall* is what the caller waited per run (through arrayd that includes the gRPC round "
                + "trip).\n\n");
        s.append("| kernel | unit |");
        for (String k : keys) {
            s.append(' ').append(k).append(" wall µs | ").append(k).append(" device µs | ").append(k).append(" rate |");
        }
        if (keys.contains(JOCL)) {
            s.append(" cpu / jocl | cpu_ir / jocl |");
        }
        s.append("\n| --- | --- |").append(" --- | --- | --- |".repeat(keys.size()))
                .append(keys.contains(JOCL) ? " --- | --- |" : "").append('\n');
        for (KernelWorkload w : workloads) {
            Map<String, Cell> row = byKernel.get(w.name());
            s.append("| ").append(w.name()).append(" | ").append(w.unit()).append(" |");
            for (String k : keys) {
                Cell c = row.get(k);
                s.append(String.format(Locale.ROOT, " %.1f | %.1f | %.2f |", c.medianWallMicros(), c.medianDeviceMicros(),
                        c.rate()));
            }
            if (keys.contains(JOCL)) {
                s.append(String.format(Locale.ROOT, " **%.2f** | **%.2f** |", row.get(CPU).rate() / row.get(JOCL).rate(),
                        row.get(CPU_IR).rate() / row.get(JOCL).rate()));
            }
            s.append('\n');
        }
        s.append("\n![kernel rates](kernels.png)\n\n");
        s.append(String.format(Locale.ROOT, "Empty-kernel launch round trip (`global = [1]`), median of %,d after as "
                + "many warm-up, one at a time:\n\n| column | median µs |\n| --- | --- |\n", roundTrips));
        for (String k : keys) {
            if (!trip.containsKey(k)) {
                continue;
            }
            s.append(String.format(Locale.ROOT, "| %s | %.1f |%n", k.equals(JOCL)
                    ? "direct JOCL enqueue + clFinish (anchor)"
                    : "arrayd launch on " + (k.startsWith(CPU) ? cpuDevice : openClDevice)
                            + (k.endsWith("_ir") ? " (IR)" : ""), trip.get(k)));
        }
        if (trip.containsKey(OPENCL) && trip.containsKey(JOCL)) {
            s.append(String.format(Locale.ROOT, "%n**Ratio %.1f** (arrayd on %s / direct JOCL).%n", trip.get(OPENCL)
                    / trip.get(JOCL), openClDevice));
        }
        s.append("\n![launch round trip](roundtrip.png)\n");
        return s.toString();
    }

    /** Short legend entries: full device names would not fit under the chart (the tables have them). */
    private static String legend(String key, String cpuDevice, String openClDevice) {
        return switch (key) {
            case CPU -> "arrayd " + cpuDevice + " (C)";
            case CPU_IR -> "arrayd " + cpuDevice + " (IR)";
            case CPU_IR_STRICT -> "arrayd " + cpuDevice + " (IR, strict)";
            case OPENCL -> "arrayd " + openClDevice + " (OpenCL C)";
            case OPENCL_IR -> "arrayd " + openClDevice + " (IR)";
            default -> "direct JOCL (anchor)";
        };
    }

    private static String csvSafe(String s) {
        return s.replace(',', ';');
    }
}
