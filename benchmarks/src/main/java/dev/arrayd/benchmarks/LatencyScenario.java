package dev.arrayd.benchmarks;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.DeviceInfo;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code bench latency}: the round trip of an empty kernel launch through the session stream, next to
 * the round trip of a plain gRPC bidi echo on the same server stack. The echo is the floor (one message
 * each way, handled on the transport thread); the difference is what arrayd adds: client batching,
 * decoding, the scheduler, the device stream's thread, the completion path.
 *
 * <p>Both run on one channel (one TCP connection, one Netty event loop, direct executors), one request
 * in flight at a time, waited for by the benchmark thread with the same {@link WaitMode}. When the
 * benchmark started the daemon, the daemon also listens on a Unix domain socket, and a third method runs
 * the same launch over it (a second client, channel and session). The methods are interleaved in
 * rounds, each going first in turn, so drift of the machine (frequency, neighbours, JIT) lands on all
 * alike.
 */
@Command(name = "latency", sortOptions = false,
        description = {"Round trip of an empty kernel launch (session stream, client-java) versus a plain gRPC "
                + "bidi echo on the same server stack, and the same launch over the daemon's Unix domain socket "
                + "(when the benchmark starts the daemon), interleaved in rounds.",
                "Writes latency.csv (every sample), summary.csv and latency.png (CDF) into the results folder; "
                        + "the last line of stdout is: RESULT latency launch_us=<median> echo_us=<median> "
                        + "ratio=<launch/echo> [uds_launch_us=<median> uds_ratio=<uds/tcp launch>].",
                "Defaults: --iterations " + LatencyScenario.DEFAULT_ITERATIONS + " samples per method, --warmup "
                        + LatencyScenario.DEFAULT_WARMUP + " per method."})
final class LatencyScenario implements Scenario {

    static final int DEFAULT_ITERATIONS = 20_000;
    /** Enough for the C2 compiler to have compiled both paths in a freshly started daemon. */
    static final int DEFAULT_WARMUP = 30_000;

    /** The kernel whose launch is timed: no parameters, no work, so only the path is left. */
    /** The empty kernel every launch-cost scenario measures, in the portable IR (a daemon's default). */
    static KernelModuleSpec emptyKernel() {
        return KernelModuleSpec.ir(dev.arrayd.client.Ir.kernel("empty").body(b -> { })).backend("cpu");
    }

    static final String LAUNCH = "launch";
    static final String ECHO = "echo";
    static final String LAUNCH_UDS = "launch_uds";

    @Mixin
    BenchOptions options = new BenchOptions();

    @Option(names = "--rounds", paramLabel = "R", defaultValue = "10",
            description = "Rounds; each runs a block of --iterations/R launches and a block of echoes, "
                    + "alternating which goes first (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--wait", paramLabel = "MODE", defaultValue = "get",
            description = "How the benchmark thread waits for each round trip, the same for both methods: "
                    + "get = CompletableFuture.get(), as a client does (parks; pays a wake-up); "
                    + "spin = busy-poll isDone() (no park, burns a core). Default: ${DEFAULT-VALUE}.")
    WaitMode wait;

    @Spec
    CommandSpec spec;

    @Override
    public String name() {
        return "latency";
    }

    @Override
    public BenchOptions options() {
        return options;
    }

    @Override
    public Report run(BenchContext ctx) throws Exception {
        int iterations = options.iterations(DEFAULT_ITERATIONS);
        int warmup = options.warmup(DEFAULT_WARMUP);
        if (rounds <= 0 || rounds > iterations) {
            throw new ParameterException(spec.commandLine(), "--rounds: " + rounds + " (expected: 1 to --iterations "
                    + iterations + ")");
        }
        Progress progress = ctx.progress();
        progress.update("latency: connecting to " + ctx.target());
        // One channel for both methods, like the client's own: Netty, direct executor (a thread hop per
        // message would cost more than what we measure).
        ManagedChannel channel = NettyChannelBuilder.forAddress(ctx.host(), ctx.port())
                .usePlaintext()
                .directExecutor()
                .maxInboundMessageSize(ArraydClient.DEFAULT_MAX_MESSAGE_BYTES)
                .build();
        long[][] launch = new long[rounds][];
        long[][] echo = new long[rounds][];
        Path socket = ctx.unixSocket();
        long[][] launchUds = socket == null ? null : new long[rounds][];
        String device;
        // The same launch over the daemon's Unix domain socket, on a channel and session of its own.
        ManagedChannel unixChannel = socket == null ? null : Grpc.newChannelBuilder("unix://" + socket,
                        InsecureChannelCredentials.create())
                .directExecutor()
                .maxInboundMessageSize(ArraydClient.DEFAULT_MAX_MESSAGE_BYTES)
                .build();
        try (ArraydClient client = ArraydClient.builder().channel(channel).build();
             Session session = client.openSession("bench-latency").get(30, TimeUnit.SECONDS);
             EchoRoundTrip echoes = new EchoRoundTrip(channel);
             ArraydClient unixClient = unixChannel == null ? null : ArraydClient.builder().channel(unixChannel).build();
             Session unixSession = unixClient == null ? null
                     : unixClient.openSession("bench-latency-uds").get(30, TimeUnit.SECONDS)) {
            device = cpuDevice(client.devices().get(30, TimeUnit.SECONDS));
            progress.update("latency: compiling the empty kernel for " + device);
            RoundTrip launches = emptyLaunches(session, device);
            RoundTrip unixLaunches = unixSession == null ? null : emptyLaunches(unixSession, device);
            List<String> names = new ArrayList<>(List.of(LAUNCH, ECHO));
            List<RoundTrip> trips = new ArrayList<>(List.of(launches, echoes));
            List<long[][]> samples = new ArrayList<>(List.of(launch, echo));
            if (unixLaunches != null) {
                names.add(LAUNCH_UDS);
                trips.add(unixLaunches);
                samples.add(launchUds);
            }

            // Warm-up: every path, interleaved too, until the JIT has compiled them.
            for (int half = 0; half < 2; half++) {
                int n = half == 0 ? warmup / 2 : warmup - warmup / 2;
                for (int m = 0; m < names.size(); m++) {
                    progress.update("latency: warm-up " + (half + 1) + "/2 " + names.get(m));
                    measure(trips.get(m), new long[n]);
                }
            }
            for (int r = 0; r < rounds; r++) {
                int n = iterations / rounds + (r < iterations % rounds ? 1 : 0);
                for (long[][] s : samples) {
                    s[r] = new long[n];
                }
                // each method goes first in turn
                for (int k = 0; k < names.size(); k++) {
                    int m = (r + k) % names.size();
                    progress.update("latency: round " + (r + 1) + "/" + rounds + " " + names.get(m) + " x" + n);
                    measure(trips.get(m), samples.get(m)[r]);
                }
                progress.line(String.format(Locale.ROOT, "latency: round %d/%d: launch median %.1f µs, echo median %.1f µs%s",
                        r + 1, rounds, Summary.ofNanos(launch[r]).median(), Summary.ofNanos(echo[r]).median(),
                        launchUds == null ? "" : String.format(Locale.ROOT, ", launch over the Unix socket %.1f µs",
                                Summary.ofNanos(launchUds[r]).median())));
            }
            progress.update("latency: closing");
        } finally {
            if (unixChannel != null) {
                unixChannel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
        }
        progress.clear();

        long[] launchAll = concat(launch);
        long[] echoAll = concat(echo);
        long[] udsAll = launchUds == null ? null : concat(launchUds);
        Summary l = Summary.ofNanos(launchAll);
        Summary e = Summary.ofNanos(echoAll);
        Summary u = udsAll == null ? null : Summary.ofNanos(udsAll);
        double ratio = l.median() / e.median();
        writeSamples(ctx.outDir().resolve("latency.csv"), launch, echo, launchUds);
        writeSummary(ctx.outDir().resolve("summary.csv"), l, e, u);
        CdfChart chart = new CdfChart(String.format(Locale.ROOT,
                "arrayd round trip on %s: empty launch vs gRPC echo (ratio %.2f)", device, ratio))
                .add("launch (session stream, TCP loopback)", launchAll)
                .add("echo (DiagnosticsService.Echo, TCP loopback)", echoAll);
        if (udsAll != null) {
            chart.add("launch (session stream, Unix socket)", udsAll);
        }
        chart.writePng(ctx.outDir().resolve("latency.png"));

        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "latency: %s daemon at %s, device %s, %d rounds, %d samples per method, "
                        + "wait=%s", ctx.inProcess() ? "in-process" : "separate-process", ctx.target(), device, rounds, iterations,
                wait.name().toLowerCase(Locale.ROOT)));
        lines.add(String.format(Locale.ROOT, "%-10s %8s %10s %10s %10s %10s", "method", "samples", "median_us", "p90_us",
                "p99_us", "mean_us"));
        lines.add(row(LAUNCH, l));
        lines.add(row(ECHO, e));
        if (u != null) {
            lines.add(row(LAUNCH_UDS, u));
        }
        lines.add(String.format(Locale.ROOT, "ratio of medians launch/echo: %.3f", ratio));
        if (u != null) {
            lines.add(String.format(Locale.ROOT, "ratio of medians launch over the Unix socket / over TCP: %.3f",
                    u.median() / l.median()));
        }
        lines.add("results: " + ctx.outDir());
        String section = String.format(Locale.ROOT, """
                What is measured, alternating in %d rounds so that drift hits every method equally, after %,d warm-up \
                round trips of each (enough for the JIT to compile every path in the fresh daemon):

                - **launch:** client-java submits one launch of an empty IR kernel (`global = [1]`; the daemon runs with default flags) on the session \
                stream (device %s) and waits for its completion future;
                - **echo (anchor):** a raw generated stub sends one 16-byte `DiagnosticsService.Echo` message on \
                the same channel and server stack and waits for it to come back;%s

                All wait the same way (`%s`), one request in flight at a time.

                | method | samples | median µs | p90 µs | p99 µs | mean µs |
                | --- | --- | --- | --- | --- | --- |
                | launch (TCP loopback) | %d | %.1f | %.1f | %.1f | %.1f |
                | echo (anchor, TCP loopback) | %d | %.1f | %.1f | %.1f | %.1f |
                %s
                **Ratio %.2f** (floor 1.5, goal 1.25).%s

                ![latency CDF](latency.png)
                """, rounds, warmup, device,
                u == null ? "" : "\n- **launch over the Unix socket:** the same launch on a session of a second client "
                        + "connected to the daemon's Unix domain socket (`serve --uds`).",
                wait == WaitMode.GET ? "CompletableFuture.get()" : "busy-polling isDone()",
                l.count(), l.median(), l.p90(), l.p99(), l.mean(), e.count(), e.median(), e.p90(), e.p99(), e.mean(),
                u == null ? "" : String.format(Locale.ROOT, "| launch (Unix socket) | %d | %.1f | %.1f | %.1f | %.1f |%n",
                        u.count(), u.median(), u.p90(), u.p99(), u.mean()),
                ratio, u == null ? "" : String.format(Locale.ROOT, " Over the Unix socket the launch takes %.2f of its "
                        + "TCP loopback time.", u.median() / l.median()));
        return new Report(lines, String.format(Locale.ROOT, "launch_us=%.1f echo_us=%.1f ratio=%.3f%s",
                l.median(), e.median(), ratio, u == null ? "" : String.format(Locale.ROOT,
                        " uds_launch_us=%.1f uds_ratio=%.3f", u.median(), u.median() / l.median())), section);
    }

    /**
     * Times {@code samples.length} round trips, one in flight at a time. Nothing else happens between
     * the two clock reads, and nothing is allocated here beyond what the round trip itself allocates.
     */
    private void measure(RoundTrip rt, long[] samples) throws Exception {
        WaitMode w = wait;
        for (int i = 0; i < samples.length; i++) {
            long t0 = System.nanoTime();
            w.await(rt.fire());
            samples[i] = System.nanoTime() - t0;
        }
    }

    /** Launches of the empty kernel on {@code device}, one round trip each. */
    private static RoundTrip emptyLaunches(Session session, String device) throws Exception {
        KernelHandle empty = session.compile(emptyKernel()).get(60, TimeUnit.SECONDS).get("empty");
        Launch one = Launch.of(empty).global(1).device(device);
        return () -> session.launch(one).future();
    }

    /** The first CPU device: the one the empty kernel is compiled for. */
    static String cpuDevice(List<DeviceInfo> devices) {
        return devices.stream().filter(d -> d.backend().equals("cpu")).map(DeviceInfo::id).findFirst()
                .orElseThrow(() -> new IllegalStateException("devices: " + devices.stream().map(DeviceInfo::id).toList()
                        + " (expected: a cpu device; start the daemon with --devices cpu)"));
    }

    private static String row(String method, Summary s) {
        return String.format(Locale.ROOT, "%-10s %8d %10.1f %10.1f %10.1f %10.1f", method, s.count(), s.median(),
                s.p90(), s.p99(), s.mean());
    }

    static long[] concat(long[][] parts) {
        int n = 0;
        for (long[] p : parts) {
            n += p.length;
        }
        long[] all = new long[n];
        int at = 0;
        for (long[] p : parts) {
            System.arraycopy(p, 0, all, at, p.length);
            at += p.length;
        }
        return all;
    }

    private static void writeSamples(Path file, long[][] launch, long[][] echo, long[][] launchUds) throws IOException {
        try (BufferedWriter w = Files.newBufferedWriter(file)) {
            w.write("method,round,iteration,micros\n");
            for (int r = 0; r < launch.length; r++) {
                writeRound(w, LAUNCH, r, launch[r]);
                writeRound(w, ECHO, r, echo[r]);
                if (launchUds != null) {
                    writeRound(w, LAUNCH_UDS, r, launchUds[r]);
                }
            }
        }
    }

    private static void writeRound(BufferedWriter w, String method, int round, long[] nanos) throws IOException {
        for (int i = 0; i < nanos.length; i++) {
            w.write(String.format(Locale.ROOT, "%s,%d,%d,%.3f%n", method, round + 1, i, nanos[i] / 1_000.0));
        }
    }

    private static void writeSummary(Path file, Summary launch, Summary echo, Summary launchUds) throws IOException {
        try (BufferedWriter w = Files.newBufferedWriter(file)) {
            w.write("method,samples,median_us,p90_us,p99_us,mean_us,min_us,max_us,median_ratio_to_echo\n");
            w.write(summaryRow(LAUNCH, launch, launch.median() / echo.median()));
            w.write(summaryRow(ECHO, echo, 1.0));
            if (launchUds != null) {
                w.write(summaryRow(LAUNCH_UDS, launchUds, launchUds.median() / echo.median()));
            }
        }
    }

    private static String summaryRow(String method, Summary s, double ratio) {
        return String.format(Locale.ROOT, "%s,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.4f%n", method, s.count(), s.median(),
                s.p90(), s.p99(), s.mean(), s.min(), s.max(), ratio);
    }
}
