package dev.arrayd.benchmarks;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import io.grpc.ManagedChannel;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
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
 * {@code bench throughput}: empty kernel launches per second pipelined through the session stream,
 * next to echo messages per second pipelined on a {@code DiagnosticsService.Echo} stream of the same
 * channel and server stack. Both keep up to {@code --window} requests unanswered and fire from one
 * thread; each request has its own future. The echo is what the transport alone sustains; the
 * launch adds client batching, decoding, the scheduler (event, stream order, dispatch) and the
 * completion.
 *
 * <p>The two alternate in rounds (which goes first alternates too), so drift lands on both.
 */
@Command(name = "throughput", sortOptions = false,
        description = {"Pipelined empty kernel launches per second (session stream, client-java) versus pipelined "
                + "gRPC echo messages per second on the same server stack, alternating in rounds.",
                "Writes throughput.csv (every round), summary.csv and throughput.png into the results folder; the "
                        + "last line of stdout is: RESULT throughput launches_per_s=<median> echo_per_s=<median> "
                        + "ratio=<launches/echo>.",
                "Defaults: --iterations " + ThroughputScenario.DEFAULT_ITERATIONS + " requests per method, --warmup "
                        + ThroughputScenario.DEFAULT_WARMUP + " per method."})
final class ThroughputScenario implements Scenario {

    static final int DEFAULT_ITERATIONS = 400_000;
    static final int DEFAULT_WARMUP = 200_000;

    static final String LAUNCH = "launch";
    static final String ECHO = "echo";

    @Mixin
    BenchOptions options = new BenchOptions();

    @Option(names = "--rounds", paramLabel = "R", defaultValue = "8",
            description = "Rounds; each runs --iterations/R launches and as many echoes (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--window", paramLabel = "W", defaultValue = "1024",
            description = "Most requests unanswered at a time, for both methods (default: ${DEFAULT-VALUE}).")
    int window;

    @Spec
    CommandSpec spec;

    @Override
    public String name() {
        return "throughput";
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
        if (window <= 0) {
            throw new ParameterException(spec.commandLine(), "--window: " + window + " (expected: > 0)");
        }
        Progress progress = ctx.progress();
        progress.update("throughput: connecting to " + ctx.target());
        ManagedChannel channel = Channels.open(ctx);
        double[] launchRate = new double[rounds];
        double[] echoRate = new double[rounds];
        long[] launchNanos = new long[rounds];
        long[] echoNanos = new long[rounds];
        int[] counts = new int[rounds];
        String device;
        JitWarmUp.Result warm;
        try (ArraydClient client = ArraydClient.builder().channel(channel).build();
             Session session = client.openSession("bench-throughput").get(30, TimeUnit.SECONDS);
             PipelinedEcho echoes = new PipelinedEcho(channel)) {
            device = LatencyScenario.cpuDevice(client.devices().get(30, TimeUnit.SECONDS));
            progress.update("throughput: compiling the empty kernel for " + device);
            KernelHandle empty = session.compile(LatencyScenario.emptyKernel()).get(60, TimeUnit.SECONDS).get("empty");
            Launch one = Launch.of(empty).global(1).device(device);
            RoundTrip launches = () -> session.launch(one).future();
            for (int half = 0; half < 2; half++) {
                int n = half == 0 ? warmup / 2 : warmup - warmup / 2;
                progress.update("throughput: warm-up " + (half + 1) + "/2 " + LAUNCH);
                Pipeline.run(launches, Math.max(1, n), window);
                progress.update("throughput: warm-up " + (half + 1) + "/2 " + ECHO);
                Pipeline.run(echoes, Math.max(1, n), window);
            }
            // both JVMs compile these paths in bursts for tens of seconds of traffic: rounds measured meanwhile
            // share the cores with the compilers (the echo's the most, as it runs after the launches' bursts)
            int step = Math.max(1, Math.min(warmup, 20_000));
            warm = JitWarmUp.run(progress, "throughput", List.of(channel), List.of(), 1, options.warmupLimit(), () -> {
                Pipeline.run(launches, step, window);
                Pipeline.run(echoes, step, window);
            });
            progress.line("throughput: " + warm.describe());
            for (int r = 0; r < rounds; r++) {
                int n = iterations / rounds + (r < iterations % rounds ? 1 : 0);
                counts[r] = n;
                boolean launchFirst = r % 2 == 0;
                for (int k = 0; k < 2; k++) {
                    boolean isLaunch = launchFirst == (k == 0);
                    progress.update("throughput: round " + (r + 1) + "/" + rounds + " " + (isLaunch ? LAUNCH : ECHO)
                            + " x" + n);
                    long nanos = Pipeline.run(isLaunch ? launches : echoes, n, window);
                    if (isLaunch) {
                        launchNanos[r] = nanos;
                        launchRate[r] = n / (nanos / 1e9);
                    } else {
                        echoNanos[r] = nanos;
                        echoRate[r] = n / (nanos / 1e9);
                    }
                }
                progress.line(String.format(Locale.ROOT, "throughput: round %d/%d: %,.0f launches/s, %,.0f echoes/s",
                        r + 1, rounds, launchRate[r], echoRate[r]));
            }
            progress.update("throughput: closing");
        }
        progress.clear();

        double l = median(launchRate);
        double e = median(echoRate);
        double ratio = l / e;
        writeRounds(ctx.outDir().resolve("throughput.csv"), counts, launchNanos, echoNanos);
        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("summary.csv"))) {
            w.write("method,rounds,median_per_s,min_per_s,max_per_s,median_ratio_to_echo\n");
            w.write(String.format(Locale.ROOT, "%s,%d,%.1f,%.1f,%.1f,%.4f%n", LAUNCH, rounds, l, min(launchRate),
                    max(launchRate), ratio));
            w.write(String.format(Locale.ROOT, "%s,%d,%.1f,%.1f,%.1f,%.4f%n", ECHO, rounds, e, min(echoRate),
                    max(echoRate), 1.0));
        }
        List<String> cats = new ArrayList<>();
        List<Double> lk = new ArrayList<>();
        List<Double> ek = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            cats.add("round " + (r + 1));
            lk.add(launchRate[r] / 1000);
            ek.add(echoRate[r] / 1000);
        }
        new BarChart(String.format(Locale.ROOT, "arrayd throughput on %s: pipelined empty launches vs gRPC echo "
                + "(ratio %.2f)", device, ratio), "thousands per second", cats)
                .add("launch (session stream)", lk)
                .add("echo (DiagnosticsService.Echo)", ek)
                .writePng(ctx.outDir().resolve("throughput.png"));

        String result = String.format(Locale.ROOT, "launches_per_s=%.0f echo_per_s=%.0f ratio=%.3f", l, e, ratio);
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "throughput: %s daemon at %s, device %s, %d rounds, %d requests per "
                + "method, window %d", ctx.inProcess() ? "in-process" : "separate-process", ctx.target(), device,
                rounds, iterations, window));
        lines.add(String.format(Locale.ROOT, "%-8s %14s %14s %14s", "method", "median_per_s", "min_per_s", "max_per_s"));
        lines.add(String.format(Locale.ROOT, "%-8s %14.0f %14.0f %14.0f", LAUNCH, l, min(launchRate), max(launchRate)));
        lines.add(String.format(Locale.ROOT, "%-8s %14.0f %14.0f %14.0f", ECHO, e, min(echoRate), max(echoRate)));
        lines.add(String.format(Locale.ROOT, "ratio of medians launch/echo: %.3f", ratio));
        lines.add("results: " + ctx.outDir());

        String section = String.format(Locale.ROOT, """
                What is measured, alternating in %d rounds after %,d warm-up requests of each and then rounds of \
                %,d of each until the JITs were quiet (%s): one thread fires \
                requests back to back with at most %d unanswered, each with its own future, and the rate is \
                requests / time until the last answer.

                - **launch:** client-java submits launches of an empty IR kernel (`global = [1]`; the daemon runs with default flags) on the session \
                stream (device %s);
                - **echo (anchor):** a raw generated stub sends 16-byte `DiagnosticsService.Echo` messages on the \
                same channel and server stack.

                | method | median /s | min /s | max /s |
                | --- | --- | --- | --- |
                | launch | %,.0f | %,.0f | %,.0f |
                | echo (anchor) | %,.0f | %,.0f | %,.0f |

                **Ratio %.2f** of the anchor's rate.

                ![throughput per round](throughput.png)
                """, rounds, warmup, Math.max(1, Math.min(warmup, 20_000)), warm.describe(), window, device, l, min(launchRate), max(launchRate), e, min(echoRate),
                max(echoRate), ratio);
        return new Report(lines, result, section);
    }

    private static void writeRounds(Path file, int[] counts, long[] launch, long[] echo) throws IOException {
        try (BufferedWriter w = Files.newBufferedWriter(file)) {
            w.write("method,round,requests,seconds,per_s\n");
            for (int r = 0; r < counts.length; r++) {
                w.write(String.format(Locale.ROOT, "%s,%d,%d,%.6f,%.1f%n", LAUNCH, r + 1, counts[r], launch[r] / 1e9,
                        counts[r] / (launch[r] / 1e9)));
                w.write(String.format(Locale.ROOT, "%s,%d,%d,%.6f,%.1f%n", ECHO, r + 1, counts[r], echo[r] / 1e9,
                        counts[r] / (echo[r] / 1e9)));
            }
        }
    }

    /** Median of a few values (the mean of the middle two for an even count). */
    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    static double min(double[] v) {
        return Arrays.stream(v).min().orElse(Double.NaN);
    }

    static double max(double[] v) {
        return Arrays.stream(v).max().orElse(Double.NaN);
    }
}
