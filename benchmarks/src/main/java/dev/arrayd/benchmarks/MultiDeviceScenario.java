package dev.arrayd.benchmarks;

import dev.arrayd.client.Access;
import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.BufferOptions;
import dev.arrayd.client.DType;
import dev.arrayd.client.Event;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import io.grpc.ManagedChannel;
import java.io.BufferedWriter;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench multidevice}: what a second device buys and what automatic transfers cost.
 *
 * <ol>
 *   <li><b>Scaling:</b> two daemons started by the benchmark itself, one with a single CPU device of
 *       one thread ({@code --devices cpu --cpu-threads 1}) and one with two such devices
 *       ({@code --devices cpu:2 --cpu-threads 1}), side by side: both are warmed up until their JITs
 *       are quiet ({@link JitWarmUp}), then measured in alternating rounds. Each round submits {@code --graphs} independent
 *       compute-bound tasks (Task Bench's kernel, its own buffer each, no device named: placement
 *       spreads them) and times them to the last completion. Throughput ratio two / one.</li>
 *   <li><b>Transfers</b> on the two-device daemon: moving {@code --size} MiB from cpu:0 to cpu:1 as an
 *       explicit cross-device copy, versus automatically, when a launch on cpu:1 reads the buffer whose
 *       replica there is stale (the launch's time with a current replica subtracted).</li>
 * </ol>
 */
@Command(name = "multidevice", sortOptions = false,
        description = {"Throughput of two one-thread CPU devices against one (independent compute-bound tasks, "
                + "placed by the daemon), and the cost of an automatic transfer against an explicit copy of the same bytes.",
                "Writes scaling.csv, transfer.csv, summary.csv and multidevice.png; the last line of stdout is: RESULT "
                        + "multidevice one_tasks_per_s=.. two_tasks_per_s=.. speedup=.. explicit_ms=.. auto_ms=.. auto_ratio=.."})
final class MultiDeviceScenario implements Scenario {

    static final int DEFAULT_ROUNDS = 30;
    /**
     * Warm-up rounds at least (each daemon's and the transfers'); the scaling warm-up then goes on until
     * the JITs are quiet ({@link JitWarmUp}), for at most {@code --warmup-seconds}.
     */
    static final int DEFAULT_WARMUP = 20;

    @Mixin
    BenchOptions options = new BenchOptions();

    @Option(names = "--graphs", defaultValue = "32", description = "Independent tasks per round (default: ${DEFAULT-VALUE}).")
    int graphs;

    @Option(names = "--iterations-per-task", defaultValue = "2000000",
            description = "Kernel iterations of one task (default: ${DEFAULT-VALUE}, about 4.5 ms on the development VM).")
    long taskIterations;

    @Option(names = "--size", paramLabel = "MIB", defaultValue = "64", description = "MiB per transfer (default: ${DEFAULT-VALUE}).")
    int sizeMib;

    @Override
    public String name() {
        return "multidevice";
    }

    @Override
    public BenchOptions options() {
        return options;
    }

    @Override
    public String daemonDevices() {
        return "cpu:2";
    }

    @Override
    public Report run(BenchContext ctx) throws Exception {
        int rounds = options.iterations(DEFAULT_ROUNDS);
        int warmup = options.warmup(DEFAULT_WARMUP);
        Progress progress = ctx.progress();
        double[][] oneRun = new double[2][rounds];
        double[][] twoRun = new double[2][rounds];
        JitWarmUp.Result warm = scaling(progress, rounds, warmup, oneRun, twoRun);
        double[] one = oneRun[0];
        double[] two = twoRun[0];
        double oneBusy = ThroughputScenario.median(oneRun[1]);
        double twoBusy = ThroughputScenario.median(twoRun[1]);
        double oneMed = ThroughputScenario.median(one);
        double twoMed = ThroughputScenario.median(two);
        double speedup = twoMed / oneMed;

        double[][] transfer = transfers(ctx, progress, rounds, warmup);
        double explicitMed = ThroughputScenario.median(transfer[0]);
        double autoMed = ThroughputScenario.median(transfer[1]);
        double autoRatio = autoMed / explicitMed;
        progress.clear();

        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("scaling.csv"))) {
            w.write("config,round,tasks,tasks_per_s,device_busy\n");
            for (int r = 0; r < rounds; r++) {
                w.write(String.format(Locale.ROOT, "one,%d,%d,%.2f,%.3f%ntwo,%d,%d,%.2f,%.3f%n", r + 1, graphs, one[r],
                        oneRun[1][r], r + 1, graphs, two[r], twoRun[1][r]));
            }
        }
        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("transfer.csv"))) {
            w.write("method,round,bytes,ms\n");
            for (int r = 0; r < rounds; r++) {
                w.write(String.format(Locale.ROOT, "explicit_copy,%d,%d,%.3f%nautomatic,%d,%d,%.3f%n", r + 1,
                        (long) sizeMib << 20, transfer[0][r], r + 1, (long) sizeMib << 20, transfer[1][r]));
            }
        }
        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("summary.csv"))) {
            w.write("measure,median,min,max,unit\n");
            w.write(String.format(Locale.ROOT, "one_device,%.2f,%.2f,%.2f,tasks/s%n", oneMed, ThroughputScenario.min(one),
                    ThroughputScenario.max(one)));
            w.write(String.format(Locale.ROOT, "two_devices,%.2f,%.2f,%.2f,tasks/s%n", twoMed, ThroughputScenario.min(two),
                    ThroughputScenario.max(two)));
            w.write(String.format(Locale.ROOT, "explicit_copy,%.3f,%.3f,%.3f,ms%n", explicitMed,
                    ThroughputScenario.min(transfer[0]), ThroughputScenario.max(transfer[0])));
            w.write(String.format(Locale.ROOT, "automatic_transfer,%.3f,%.3f,%.3f,ms%n", autoMed,
                    ThroughputScenario.min(transfer[1]), ThroughputScenario.max(transfer[1])));
        }
        new BarChart(String.format(Locale.ROOT, "arrayd multi-device: %d tasks per round (median of %d rounds)", graphs,
                rounds), "relative to one device / explicit copy", List.of("throughput", "transfer time"))
                .add("one device (1 thread) / explicit copy", List.of(1.0, 1.0))
                .add("two devices (1 thread each) / automatic transfer", List.of(speedup, autoRatio))
                .writePng(ctx.outDir().resolve("multidevice.png"));

        String result = String.format(Locale.ROOT, "one_tasks_per_s=%.1f two_tasks_per_s=%.1f speedup=%.3f explicit_ms=%.2f "
                + "auto_ms=%.2f auto_ratio=%.3f", oneMed, twoMed, speedup, explicitMed, autoMed, autoRatio);
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "multidevice: %d independent tasks of %d iterations per round, %d rounds",
                graphs, taskIterations, rounds));
        lines.add(String.format(Locale.ROOT, "one device of one thread:   %8.1f tasks/s (median), devices busy %.0f%% of the round",
                oneMed, 100 * oneBusy));
        lines.add(String.format(Locale.ROOT, "two devices of one thread:  %8.1f tasks/s (median), devices busy %.0f%% of the round, "
                + "speedup %.2f", twoMed, 100 * twoBusy, speedup));
        lines.add(String.format(Locale.ROOT, "%d MiB cpu:0 -> cpu:1: explicit copy %.2f ms, automatic transfer %.2f ms (ratio %.2f)",
                sizeMib, explicitMed, autoMed, autoRatio));
        lines.add("results: " + ctx.outDir());
        String section = String.format(Locale.ROOT, """
                What is measured (%d rounds; %s):

                - **scaling:** two daemons started by the benchmark side by side, `--devices cpu --cpu-threads 1` and \
                `--devices cpu:2 --cpu-threads 1`, warmed up until their JITs were quiet and then measured in alternating \
                rounds. A round submits %d independent tasks at once (Task Bench's compute-bound kernel, %d \
                iterations, each on its own buffer created on the first device; launches name no device, so the \
                daemon places them) and waits for the last. A CPU device runs at most one kernel per thread at a time, \
                whatever the number of streams feeding it.
                - **transfers:** on a `--devices cpu:2` daemon, %d MiB written on cpu:0, then moved to cpu:1 either by an \
                explicit `copy(src, dst)` into a buffer on cpu:1, or automatically: a launch on cpu:1 that reads \
                one element of the buffer while its replica there is stale (its time with a current replica, measured \
                right after, is subtracted).

                | measure | one device | two devices | ratio |
                | --- | --- | --- | --- |
                | tasks/s | %.1f | %.1f | **%.2f** |
                | devices busy (device time / devices × round time) | %.0f%% | %.0f%% | |

                | %d MiB cpu:0 → cpu:1 | explicit copy | automatic transfer | ratio |
                | --- | --- | --- | --- |
                | ms | %.2f | %.2f | **%.2f** |

                ![multi-device](multidevice.png)
                """, rounds, warm.describe(), graphs, taskIterations, sizeMib, oneMed, twoMed, speedup, 100 * oneBusy,
                100 * twoBusy, sizeMib, explicitMed, autoMed, autoRatio);
        return new Report(lines, result, section);
    }

    /**
     * Starts the two daemons ({@code --devices cpu --cpu-threads 1} and {@code --devices cpu:2
     * --cpu-threads 1}) side by side, warms both up until their JITs (and this JVM's) are quiet, then
     * measures them in alternating rounds (one, two; two, one; ...), so that whatever the host does over
     * the run weighs on both alike. Fills, per round, {tasks per second, the fraction of the round the
     * daemon's devices spent computing} of each.
     */
    private JitWarmUp.Result scaling(Progress progress, int rounds, int warmup, double[][] oneOut, double[][] twoOut)
            throws Exception {
        progress.update("multidevice: starting the two daemons");
        try (ScalingRig one = new ScalingRig("one", 1, List.of("--devices", "cpu", "--cpu-threads", "1"));
             ScalingRig two = new ScalingRig("two", 2, List.of("--devices", "cpu:2", "--cpu-threads", "1"))) {
            JitWarmUp.Result warm = JitWarmUp.run(progress, "multidevice", List.of(one.channel, two.channel), List.of(),
                    warmup, options.warmupLimit(), () -> {
                        one.round();
                        two.round();
                    });
            progress.line("multidevice: " + warm.describe());
            for (int r = 0; r < rounds; r++) {
                ScalingRig first = r % 2 == 0 ? one : two;
                ScalingRig second = first == one ? two : one;
                for (ScalingRig rig : List.of(first, second)) {
                    double[][] out = rig == one ? oneOut : twoOut;
                    progress.update(String.format(Locale.ROOT, "multidevice: round %d/%d, %s", r + 1, rounds, rig.label));
                    double[] m = rig.round();
                    out[0][r] = m[0];
                    out[1][r] = m[1];
                    progress.line(String.format(Locale.ROOT, "multidevice: %s round %d/%d: %.1f tasks/s, devices busy %.0f%%",
                            rig.label, r + 1, rounds, m[0], 100 * m[1]));
                }
            }
            return warm;
        }
    }

    /** A daemon of its own with a session, the compute kernel and one state buffer per task. */
    private final class ScalingRig implements AutoCloseable {
        final String label;
        final int devices;
        final DaemonChild daemon;
        final DaemonClient client;
        final ManagedChannel channel;
        final Session session;
        final KernelHandle kernel;
        final List<BufferHandle> states = new ArrayList<>();

        ScalingRig(String label, int devices, List<String> serveArgs) throws Exception {
            this.label = label;
            this.devices = devices;
            List<String> args = new ArrayList<>(serveArgs);
            daemon = new DaemonChild(args);
            client = DaemonClient.of(daemon, "bench-multidevice");
            channel = client.channel();
            session = client.session();
            kernel = session.compile(KernelModuleSpec.ir(ComputeKernel.ir()).backend("cpu")).get(60, TimeUnit.SECONDS)
                    .get(ComputeKernel.NAME);
            for (int g = 0; g < graphs; g++) {
                states.add(session.createBuffer(DType.F64, new long[] {ComputeKernel.STATE_DOUBLES},
                        BufferOptions.defaults()).get(30, TimeUnit.SECONDS));
            }
        }

        /**
         * One round: every task launched at once (no device named: the daemon places them), until the
         * last is done. Returns {tasks per second, device time / (devices × round time)}.
         */
        double[] round() throws Exception {
            long t0 = System.nanoTime();
            List<Launch> launches = new ArrayList<>(graphs);
            for (BufferHandle b : states) {
                launches.add(Launch.of(kernel).global(1).args(b, taskIterations));
            }
            List<Event> events = session.launchAll(launches);
            long deviceNanos = 0;
            for (Event e : events) {
                deviceNanos += e.future().get(300, TimeUnit.SECONDS).deviceNanos();
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            return new double[] {graphs / secs, deviceNanos / 1e9 / (secs * devices)};
        }

        @Override
        public void close() throws Exception {
            try {
                client.close();
            } finally {
                daemon.close();
            }
        }
    }

    /** Per round: {explicit copy ms, automatic transfer ms}, on the benchmark's own cpu:2 daemon. */
    private double[][] transfers(BenchContext ctx, Progress progress, int rounds, int warmup) throws Exception {
        long bytes = (long) sizeMib << 20;
        double[][] out = new double[2][rounds];
        ManagedChannel channel = Channels.open(ctx);
        try (ArraydClient client = ArraydClient.builder().channel(channel).build();
             Session s = client.openSession("bench-multidevice-transfer").get(30, TimeUnit.SECONDS)) {
            KernelHandle touch = s.compile(KernelModuleSpec.ir(dev.arrayd.client.Ir.kernel("touch")
                    .buffer("src", DType.U8, Access.READ, dev.arrayd.client.Ir.i64(1))
                    .buffer("out", DType.U8, Access.WRITE, dev.arrayd.client.Ir.i64(1))
                    .body(b -> b.store("out", dev.arrayd.client.Ir.i64(0), dev.arrayd.client.Ir.load("src", dev.arrayd.client.Ir.i64(0)))))
                    .backend("cpu")).get(60, TimeUnit.SECONDS).get("touch");
            BufferHandle src = s.createBuffer(DType.U8, new long[] {bytes}, BufferOptions.defaults().device("cpu:0"))
                    .get(30, TimeUnit.SECONDS);
            BufferHandle dst = s.createBuffer(DType.U8, new long[] {bytes}, BufferOptions.defaults().device("cpu:1"))
                    .get(30, TimeUnit.SECONDS);
            BufferHandle one = s.createBuffer(DType.U8, new long[] {1}, BufferOptions.defaults().device("cpu:1"))
                    .get(30, TimeUnit.SECONDS);
            Launch read = Launch.of(touch).global(1).args(src, one).device("cpu:1");
            for (int r = -warmup; r < rounds; r++) {
                progress.update(String.format(Locale.ROOT, "multidevice: transfers %s %d", r < 0 ? "warm-up" : "round",
                        r < 0 ? r + warmup + 1 : r + 1));
                s.fill(src, r & 0x7f).future().get(60, TimeUnit.SECONDS); // current on cpu:0 only
                long t0 = System.nanoTime();
                s.copy(src, dst).future().get(60, TimeUnit.SECONDS);
                double explicit = (System.nanoTime() - t0) / 1e6;
                s.fill(src, (r + 1) & 0x7f).future().get(60, TimeUnit.SECONDS); // stale on cpu:1 again
                long t1 = System.nanoTime();
                s.launch(read).future().get(60, TimeUnit.SECONDS);
                double stale = (System.nanoTime() - t1) / 1e6;
                long t2 = System.nanoTime();
                s.launch(read).future().get(60, TimeUnit.SECONDS);
                double current = (System.nanoTime() - t2) / 1e6;
                if (r >= 0) {
                    out[0][r] = explicit;
                    out[1][r] = Math.max(0, stale - current);
                }
            }
            if ((s.readBytes(one).get(30, TimeUnit.SECONDS)[0] & 0xff) != ((rounds) & 0x7f)) {
                throw new IllegalStateException("the launch on cpu:1 did not see the newest data of the buffer");
            }
        } finally {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
        return out;
    }
}
