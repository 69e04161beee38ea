package dev.arrayd.benchmarks;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.DType;
import dev.arrayd.client.Dialect;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.cpu.CpuBackend;
import dev.arrayd.scheduler.Buffer;
import dev.arrayd.scheduler.CommandSpec;
import dev.arrayd.scheduler.CompiledKernel;
import dev.arrayd.scheduler.Event;
import dev.arrayd.scheduler.ModuleSpec;
import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.scheduler.SchedulerConfig;
import io.grpc.ManagedChannel;
import java.io.BufferedWriter;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench tenants}: fair share between sessions on one CPU device.
 *
 * <ol>
 *   <li><b>Fairness.</b> An in-process scheduler over the CPU backend (weights are set by the server
 *       from a tenant's token, which the wire cannot do without auth): two sessions of weights 1 and
 *       3 each keep several streams busy with a spin kernel; the ratio of their device time while both
 *       have work waiting.</li>
 *   <li><b>Flood.</b> Against the daemon, over gRPC: a polite client sends one empty launch at a time
 *       and times its round trips, alone and while another client ({@link FloodClient}, a process of its
 *       own with its own connection and session) keeps several streams full of spin launches. Both
 *       phases are warmed up first and then measured in alternating blocks.</li>
 * </ol>
 */
@Command(name = "tenants", sortOptions = false,
        description = {"Fair share: device time of two sessions of weights 1:3 on a saturated CPU device "
                + "(in-process scheduler), and a polite client's round trip alone and during another client's flood.",
                "Writes polite.csv and summary.csv; the last line of stdout is: RESULT tenants fairness_ratio=<heavy/light> "
                        + "polite_p50_alone_us=.. polite_p99_alone_us=.. polite_p50_flood_us=.. polite_p99_flood_us=.. "
                        + "p99_ratio=.. p99_block_ratio=..",
                "Defaults: --iterations " + TenantsScenario.DEFAULT_ITERATIONS + " polite round trips per phase; warm-up: at "
                        + "least --warmup " + TenantsScenario.DEFAULT_WARMUP + " round trips, then on until the JITs are quiet "
                        + "(at most --warmup-seconds)."})
final class TenantsScenario implements Scenario {

    static final int DEFAULT_ITERATIONS = 5_000;
    static final int DEFAULT_WARMUP = 10_000;
    static final int WARM_PER_STREAM = 20;
    /** Alternating blocks of the alone and flood phases. */
    static final int BLOCKS = 10;
    /** Round trips discarded after a flood starts, while it fills its windows. */
    static final int SETTLE = 200;

    /** The flood's kernel in C, for the in-process part (a scheduler without a daemon; the flood client sends {@link FloodClient#spin}). */
    static final String SPIN = """
            ARRAYD_KERNEL void spin(ARRAYD_ITEM, float *x, int32_t n) {
                float s = x[0];
                for (int32_t i = 0; i < n; i++) s = s * 0.9999f + 1.0f;
                x[0] = s;
            }
            """;

    @Mixin
    BenchOptions options = new BenchOptions();

    @Option(names = "--spin", paramLabel = "N", defaultValue = "20000",
            description = "Iterations of the flood's spin kernel (about 1 ns each; default: ${DEFAULT-VALUE}).")
    int spin;

    @Option(names = "--flood-streams", paramLabel = "S", defaultValue = "4",
            description = "Streams the flooding client keeps full (default: ${DEFAULT-VALUE}).")
    int floodStreams;

    @Override
    public String name() {
        return "tenants";
    }

    @Override
    public BenchOptions options() {
        return options;
    }

    @Override
    public Report run(BenchContext ctx) throws Exception {
        int iterations = options.iterations(DEFAULT_ITERATIONS);
        int warmup = options.warmup(DEFAULT_WARMUP);
        Progress progress = ctx.progress();

        progress.update("tenants: fairness, weights 1:3, in-process scheduler");
        double[] fairness = fairness();
        progress.line(String.format(Locale.ROOT, "tenants: device time heavy/light = %.3f (weights 3/1)", fairness[0]));

        long[] alone = new long[iterations];
        long[] flood = new long[iterations];
        long[] floodDone = new long[1];
        JitWarmUp.Result warm;
        String device;
        ManagedChannel politeChannel = Channels.open(ctx);
        try (ArraydClient polite = ArraydClient.builder().channel(politeChannel).build();
             Session ps = polite.openSession("bench-tenants-polite").get(30, TimeUnit.SECONDS)) {
            device = LatencyScenario.cpuDevice(polite.devices().get(30, TimeUnit.SECONDS));
            KernelHandle empty = ps.compile(LatencyScenario.emptyKernel()).get(60, TimeUnit.SECONDS).get("empty");
            Launch one = Launch.of(empty).global(1).device(device);
            progress.update("tenants: starting the flooding client");
            try (FloodProcess flooder = new FloodProcess(ctx.host(), ctx.port(), device, floodStreams, spin, 8)) {
                // Warm-up runs both phases, block by block as measured, until the JITs of the daemon and of
                // both clients are quiet: otherwise the JIT compiles the flood's paths (C2 takes most of a
                // core, on and off, for tens of seconds in a fresh daemon) while the polite client is measured.
                int block = Math.max(1, iterations / BLOCKS);
                long[] scratch = new long[Math.max(block, SETTLE)];
                warm = JitWarmUp.run(progress, "tenants", List.of(politeChannel), List.of(flooder::jitMillis),
                        Math.max(1, warmup / block / 2), options.warmupLimit(), () -> {
                            measure(ps, one, scratch, 0, block);
                            flooder.on();
                            try {
                                measure(ps, one, scratch, 0, SETTLE);
                                measure(ps, one, scratch, 0, block);
                            } finally {
                                flooder.off();
                            }
                        });
                // Alone and flood samples are taken in alternating blocks, so that whatever drifts over a
                // run (the heap, the host's other work) weighs on both phases alike.
                long floodSent = 0;
                for (int done = 0, b = 1; done < iterations; done += block, b++) {
                    int n = Math.min(block, iterations - done);
                    progress.update(String.format(Locale.ROOT, "tenants: block %d/%d, polite alone x%d", b, BLOCKS, n));
                    measure(ps, one, alone, done, n);
                    flooder.on();
                    try {
                        progress.update(String.format(Locale.ROOT, "tenants: block %d/%d, polite during the flood x%d",
                                b, BLOCKS, n));
                        measure(ps, one, new long[SETTLE], 0, SETTLE); // the flood fills its windows first
                        measure(ps, one, flood, done, n);
                    } finally {
                        floodSent += flooder.off();
                    }
                }
                floodDone[0] = floodSent;
            }
        } finally {
            politeChannel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
        progress.clear();

        Summary a = Summary.ofNanos(alone);
        Summary fl = Summary.ofNanos(flood);
        double p99Ratio = fl.p99() / a.p99();
        double blockRatio = medianBlockP99Ratio(alone, flood, Math.max(1, iterations / BLOCKS));
        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("polite.csv"))) {
            w.write("phase,iteration,micros\n");
            for (int i = 0; i < alone.length; i++) {
                w.write(String.format(Locale.ROOT, "alone,%d,%.3f%n", i, alone[i] / 1e3));
            }
            for (int i = 0; i < flood.length; i++) {
                w.write(String.format(Locale.ROOT, "flood,%d,%.3f%n", i, flood[i] / 1e3));
            }
        }
        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("summary.csv"))) {
            w.write("metric,value\n");
            w.write(String.format(Locale.ROOT, "fairness_ratio,%.4f%nlight_device_ms,%.3f%nheavy_device_ms,%.3f%n",
                    fairness[0], fairness[1] / 1e6, fairness[2] / 1e6));
            w.write(String.format(Locale.ROOT, "polite_p50_alone_us,%.3f%npolite_p99_alone_us,%.3f%n", a.median(), a.p99()));
            w.write(String.format(Locale.ROOT, "polite_p50_flood_us,%.3f%npolite_p99_flood_us,%.3f%n", fl.median(), fl.p99()));
            w.write(String.format(Locale.ROOT, "flood_launches,%d%n", floodDone[0]));
        }
        new CdfChart(String.format(Locale.ROOT, "polite client on %s: alone vs during a flood (p99 ratio %.2f)", device,
                p99Ratio))
                .add("alone", alone)
                .add("during the flood", flood)
                .writePng(ctx.outDir().resolve("polite.png"));
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "tenants: %s daemon at %s, device %s; flood: %d streams of spin(%d), %,d "
                        + "launches", ctx.inProcess() ? "in-process" : "separate-process", ctx.target(), device,
                floodStreams, spin, floodDone[0]));
        lines.add(String.format(Locale.ROOT, "fairness (weights 3:1): device time ratio %.3f (heavy %.1f ms, light %.1f ms)",
                fairness[0], fairness[2] / 1e6, fairness[1] / 1e6));
        lines.add(String.format(Locale.ROOT, "%-8s %10s %10s %10s", "polite", "median_us", "p90_us", "p99_us"));
        lines.add(String.format(Locale.ROOT, "%-8s %10.1f %10.1f %10.1f", "alone", a.median(), a.p90(), a.p99()));
        lines.add(String.format(Locale.ROOT, "%-8s %10.1f %10.1f %10.1f", "flood", fl.median(), fl.p90(), fl.p99()));
        lines.add(String.format(Locale.ROOT, "p99 during the flood / alone: %.2f (goal: at most 2); median over the %d "
                + "block pairs of the same ratio: %.2f", p99Ratio, BLOCKS, blockRatio));
        lines.add("tenants: " + warm.describe());
        lines.add("results: " + ctx.outDir());
        String section = String.format(Locale.ROOT, """
                Two measurements of the device queue's fair share (`docs/architecture.md`, scheduling):

                - **fairness:** an in-process scheduler over the CPU backend; two sessions of weights 1 and 3 \
                each keep 8 streams busy with a spin kernel (5 x the flood's); the ratio of their device time (sum of the \
                commands' measured device nanoseconds) while both still have work waiting. **%.3f** (goal: 3 \
                within 10%%).
                - **flood:** against the daemon over gRPC, a polite client sends one empty launch at a time (its \
                own connection and session) and times the round trip, alone and while another client, a process \
                of its own, keeps %d streams full of `spin(%d)` launches (8 unanswered per stream). Both phases \
                are warmed up first, block by block, until the JITs of the daemon and both clients are quiet (%s), \
                then measured in %d alternating blocks (the first %d round trips after the flood starts are not \
                counted).

                | polite round trip | median µs | p90 µs | p99 µs |
                | --- | --- | --- | --- |
                | alone | %.1f | %.1f | %.1f |
                | during the flood | %.1f | %.1f | %.1f |

                **p99 ratio %.2f** (goal: at most 2). The median over the %d pairs of adjacent blocks of the same \
                ratio (each block's p99 is its 5th slowest of 500): %.2f.

                ![polite CDF](polite.png)
                """, fairness[0], floodStreams, spin, warm.describe(), BLOCKS, SETTLE, a.median(), a.p90(), a.p99(), fl.median(),
                fl.p90(), fl.p99(), p99Ratio, BLOCKS, blockRatio);
        return new Report(lines, String.format(Locale.ROOT, "fairness_ratio=%.3f polite_p50_alone_us=%.1f "
                        + "polite_p99_alone_us=%.1f polite_p50_flood_us=%.1f polite_p99_flood_us=%.1f p99_ratio=%.2f "
                        + "p99_block_ratio=%.2f",
                fairness[0], a.median(), a.p99(), fl.median(), fl.p99(), p99Ratio, blockRatio), section);
    }

    /**
     * The median, over the pairs of blocks measured one after the other, of the flood block's p99 over
     * the alone block's: a host stall that hits one block moves one pair, not the whole figure.
     */
    static double medianBlockP99Ratio(long[] alone, long[] flood, int block) {
        List<Double> ratios = new ArrayList<>();
        for (int from = 0; from < alone.length; from += block) {
            int to = Math.min(alone.length, from + block);
            ratios.add(Summary.ofNanos(java.util.Arrays.copyOfRange(flood, from, to)).p99()
                    / Summary.ofNanos(java.util.Arrays.copyOfRange(alone, from, to)).p99());
        }
        return ThroughputScenario.median(ratios.stream().mapToDouble(Double::doubleValue).toArray());
    }

    /** Times {@code n} round trips into {@code samples[from..from+n)}. */
    private static void measure(Session s, Launch one, long[] samples, int from, int n) throws Exception {
        for (int i = from; i < from + n; i++) {
            long t0 = System.nanoTime();
            s.launch(one).future().get(30, TimeUnit.SECONDS);
            samples[i] = System.nanoTime() - t0;
        }
    }

    /** Device time of two sessions of weights 1 and 3 on the CPU device; {ratio, light ns, heavy ns}. */
    private double[] fairness() throws Exception {
        CpuBackend backend = new CpuBackend();
        List<Device> devices = backend.openDevices(1);
        try (Scheduler sch = new Scheduler(SchedulerConfig.defaults().withAllowNativeSource(true), devices,
                Map.of("cpu", backend.compiler()))) {
            KernelSignature sig = new KernelSignature("spin", List.of(
                    KernelParam.buffer("x", dev.arrayd.devices.api.DType.F32, Access.READ_WRITE),
                    KernelParam.scalar("n", dev.arrayd.devices.api.DType.I32)));
            int streams = 8;
            int perStream = 150;
            dev.arrayd.scheduler.Session[] sessions = {sch.openSession("light", 60_000), sch.openSession("heavy", 60_000)};
            sessions[0].setTenant("light", 1);
            sessions[1].setTenant("heavy", 3);
            List<List<CommandSpec>> work = new ArrayList<>();
            for (dev.arrayd.scheduler.Session s : sessions) {
                CompiledKernel k = sch.compile(s, List.of(new ModuleSpec(new KernelSource(
                        dev.arrayd.devices.api.Dialect.C, SPIN, List.of(sig)), "cpu"))).getFirst().kernels().getFirst();
                List<CommandSpec> warm = new ArrayList<>();
                List<CommandSpec> batch = new ArrayList<>();
                long event = 1;
                for (int i = 0; i < streams; i++) {
                    Buffer x = sch.createBuffer(s, dev.arrayd.devices.api.DType.F32, new long[] {1}, "", "x");
                    long st = sch.createStream(s, "").handle();
                    for (int n = 0; n < WARM_PER_STREAM + perStream; n++) {
                        (n < WARM_PER_STREAM ? warm : batch).add(new CommandSpec(event++, null, st,
                                new CommandSpec.LaunchOp(k.handle(), new long[] {1}, null, List.of(
                                        new CommandSpec.BufferArg(x.handle()), new CommandSpec.ScalarArg(
                                                dev.arrayd.devices.api.KernelArg.Scalar.i32(5 * spin))), "")));
                    }
                }
                // first runs pay for loading and page faults (milliseconds): not part of the measurement
                for (Event e : sch.submit(s, warm, null)) {
                    e.toFuture().get(120, TimeUnit.SECONDS);
                }
                work.add(batch);
            }
            LongAdder[] nanos = {new LongAdder(), new LongAdder()};
            long[] atHalf = new long[2];
            AtomicInteger heavyLeft = new AtomicInteger(streams * perStream);
            CompletableFuture<Void> half = new CompletableFuture<>();
            List<Event> all = new ArrayList<>(sch.submit(sessions[0], work.get(0), e -> nanos[0].add(e.deviceNanos())));
            all.addAll(sch.submit(sessions[1], work.get(1), e -> {
                nanos[1].add(e.deviceNanos());
                if (heavyLeft.decrementAndGet() == streams * perStream / 2) {
                    atHalf[0] = nanos[0].sum();
                    atHalf[1] = nanos[1].sum();
                    half.complete(null);
                }
            }));
            // The window starts once both sessions have all their work submitted: before that the light
            // session ran alone (while the heavy one was still submitting), which is not shared time. It
            // ends when the heavy session has half its work done, while the light one still has most of
            // its work waiting: both are backlogged throughout.
            long[] atStart = {nanos[0].sum(), nanos[1].sum()};
            half.get(120, TimeUnit.SECONDS);
            for (Event e : all) {
                e.toFuture().get(120, TimeUnit.SECONDS);
            }
            atHalf[0] -= atStart[0];
            atHalf[1] -= atStart[1];
            return new double[] {(double) atHalf[1] / atHalf[0], atHalf[0], atHalf[1]};
        } finally {
            backend.close();
        }
    }
}
