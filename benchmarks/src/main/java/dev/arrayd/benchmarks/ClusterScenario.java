package dev.arrayd.benchmarks;

import dev.arrayd.client.Launch;
import java.io.BufferedWriter;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench cluster}: daemons as devices of another daemon, each figure side by side in one run.
 *
 * <ol>
 *   <li><b>Remote launch:</b> an empty launch's round trip through an entry daemon ({@code --devices none
 *       --peers p=…}) to a device of its peer, against the same launch sent to the peer directly; rounds
 *       alternate between the two.</li>
 *   <li><b>Bulk copy:</b> {@code --size} MiB copied from a device of one peer to a device of another through
 *       an entry daemon (the receiving peer fetches them from the sending one), against raw gRPC streaming of
 *       as many bytes between the same two processes ({@code PeerService.MeasureLink}).</li>
 *   <li><b>Scaling:</b> independent compute-bound tasks (Task Bench's kernel) on 1, 2 and 3 one-thread peer
 *       daemons through one entry daemon, the tasks spread round-robin over the peers' devices; against it, the same
 *       tasks on 1 and 2 one-thread devices of one daemon sent to directly (what the machine gives two threads).</li>
 * </ol>
 */
@Command(name = "cluster", sortOptions = false,
        description = {"Remote daemons as devices: an empty launch through an entry daemon vs sent to the peer directly; "
                + "a bulk copy between two peers vs raw gRPC streaming between them; compute-bound tasks on 1, 2 and 3 "
                + "one-thread peers through one entry daemon, against 1 and 2 one-thread devices of one daemon.",
                "Writes launch.csv, copy.csv, scaling.csv, summary.csv and cluster.png; the last line of stdout is: RESULT "
                        + "cluster direct_us=.. entry_us=.. launch_ratio=.. copy_ms=.. raw_ms=.. copy_ratio=.. speedup2=.. speedup3=.. "
                        + "local_speedup2=.."})
final class ClusterScenario implements Scenario {

    static final int DEFAULT_ROUNDS = 15;
    static final int DEFAULT_WARMUP = 5;
    static final int LAUNCHES_PER_ROUND = 200;

    @Mixin
    BenchOptions options = new BenchOptions();

    @Option(names = "--size", paramLabel = "MIB", defaultValue = "256", description = "MiB per bulk copy (default: ${DEFAULT-VALUE}).")
    int sizeMib;

    @Option(names = "--tasks", defaultValue = "12", description = "Independent tasks per scaling round (default: ${DEFAULT-VALUE}).")
    int tasks;

    @Option(names = "--iterations-per-task", defaultValue = "2000000",
            description = "Kernel iterations of one task (default: ${DEFAULT-VALUE}).")
    long taskIterations;

    @Option(names = "--network-delays-us", split = ",", defaultValue = "100,250,500",
            description = "One-way delays (µs) of the emulated network the sidecar-shaped launches cross "
                    + "(default: ${DEFAULT-VALUE}).")
    long[] networkDelaysMicros;

    @Option(names = "--copy-only", description = "Measure the bulk copy only (a quick check; writes no report).")
    boolean copyOnly;

    @Override
    public String name() {
        return "cluster";
    }

    @Override
    public BenchOptions options() {
        return options;
    }

    @Override
    public Report run(BenchContext ctx) throws Exception {
        int rounds = options.iterations(DEFAULT_ROUNDS);
        int warmup = options.warmup(DEFAULT_WARMUP);
        Progress progress = ctx.progress();
        double[][] launch = launches(progress, rounds, warmup);
        SidecarLaunches.Result sidecar = copyOnly ? null
                : SidecarLaunches.run(progress, networkDelaysMicros, rounds, LAUNCHES_PER_ROUND, warmup, options.warmupLimit());
        PeerCopies.Result copies = PeerCopies.run(progress, sizeMib, rounds, warmup, options.warmupLimit());
        double[][] copy = copies.perRound();
        if (copyOnly) {
            return new Report(List.of(String.format(Locale.ROOT, "%d MiB peer to peer: copy %.1f ms, raw %.1f ms (ratio %.2f)",
                    sizeMib, median(copy[0]), median(copy[1]), median(copy[1]) / median(copy[0]))), "copy_only", "");
        }
        ScalingTasks.Result scaled = ScalingTasks.run(progress, tasks, taskIterations, rounds, warmup, options.warmupLimit());
        double[][] scaling = scaled.perSecond();
        progress.clear();

        double direct = median(launch[0]);
        double entry = median(launch[1]);
        double launchRatio = entry / direct;
        double copyMs = median(copy[0]);
        double rawMs = median(copy[1]);
        double copyRatio = rawMs / copyMs;
        double[] perSecond = {median(scaling[0]), median(scaling[1]), median(scaling[2])};
        double speedup2 = perSecond[1] / perSecond[0];
        double speedup3 = perSecond[2] / perSecond[0];
        double[] localPerSecond = {median(scaling[3]), median(scaling[4])};
        double localSpeedup2 = localPerSecond[1] / localPerSecond[0];
        long[] delays = sidecar.oneWayMicros();
        double[][] sidecarMedians = new double[delays.length][];
        for (int i = 0; i < delays.length; i++) {
            double[][] m = sidecar.micros()[i];
            sidecarMedians[i] = new double[] {median(m[0]), median(m[1]), median(m[1]) / median(m[0])};
        }

        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("launch.csv"))) {
            w.write("path,round,median_us\n");
            for (int r = 0; r < rounds; r++) {
                w.write(String.format(Locale.ROOT, "direct,%d,%.2f%nentry,%d,%.2f%n", r + 1, launch[0][r], r + 1, launch[1][r]));
            }
        }
        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("sidecar.csv"))) {
            w.write("one_way_us,round,direct_us,sidecar_us\n");
            for (int i = 0; i < delays.length; i++) {
                for (int r = 0; r < rounds; r++) {
                    w.write(String.format(Locale.ROOT, "%d,%d,%.2f,%.2f%n", delays[i], r + 1, sidecar.micros()[i][0][r],
                            sidecar.micros()[i][1][r]));
                }
            }
        }
        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("copy.csv"))) {
            w.write("method,round,bytes,ms,source_cpu_ms,receiver_cpu_ms\n");
            for (int r = 0; r < rounds; r++) {
                w.write(String.format(Locale.ROOT, "peer_copy,%d,%d,%.2f,%.0f,%.0f%nraw_grpc,%d,%d,%.2f,%.0f,%.0f%n", r + 1,
                        (long) sizeMib << 20, copy[0][r], copy[2][r], copy[3][r], r + 1, (long) sizeMib << 20, copy[1][r],
                        copy[4][r], copy[5][r]));
            }
        }
        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("scaling.csv"))) {
            w.write("where,devices,round,tasks,tasks_per_s\n");
            for (int p = 0; p < 5; p++) {
                for (int r = 0; r < rounds; r++) {
                    w.write(String.format(Locale.ROOT, "%s,%d,%d,%d,%.2f%n", p < 3 ? "peers" : "local", p < 3 ? p + 1 : p - 2,
                            r + 1, tasks, scaling[p][r]));
                }
            }
        }
        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("summary.csv"))) {
            w.write("measure,median,min,max,unit\n");
            w.write(row("launch_direct", launch[0], "us"));
            w.write(row("launch_through_entry", launch[1], "us"));
            for (int i = 0; i < delays.length; i++) {
                w.write(row("launch_direct_network_" + delays[i] + "us", sidecar.micros()[i][0], "us"));
                w.write(row("launch_through_sidecar_network_" + delays[i] + "us", sidecar.micros()[i][1], "us"));
            }
            w.write(row("peer_copy", copy[0], "ms"));
            w.write(row("raw_grpc_stream", copy[1], "ms"));
            w.write(row("peer_copy_source_cpu", copy[2], "ms"));
            w.write(row("peer_copy_receiver_cpu", copy[3], "ms"));
            w.write(row("raw_grpc_source_cpu", copy[4], "ms"));
            w.write(row("raw_grpc_receiver_cpu", copy[5], "ms"));
            for (int p = 0; p < 3; p++) {
                w.write(row("tasks_" + (p + 1) + "_peers", scaling[p], "tasks/s"));
            }
            w.write(row("tasks_1_local_device", scaling[3], "tasks/s"));
            w.write(row("tasks_2_local_devices", scaling[4], "tasks/s"));
        }
        List<String> categories = new ArrayList<>(List.of("launch"));
        List<Double> goals = new ArrayList<>(List.of(1.3));
        List<Double> measured = new ArrayList<>(List.of(launchRatio));
        StringBuilder sidecarRows = new StringBuilder();
        StringBuilder sidecarResult = new StringBuilder();
        for (int i = 0; i < delays.length; i++) {
            categories.add(String.format(Locale.ROOT, "sidecar %d µs", delays[i]));
            goals.add(1.3);
            measured.add(sidecarMedians[i][2]);
            sidecarRows.append(String.format(Locale.ROOT, "| %d µs | %.1f µs | %.1f µs | **%.2f** | ≤ 1.3 |%n", delays[i],
                    sidecarMedians[i][0], sidecarMedians[i][1], sidecarMedians[i][2]));
            sidecarResult.append(String.format(Locale.ROOT, " sidecar_ratio_%dus=%.3f", delays[i], sidecarMedians[i][2]));
        }
        categories.addAll(List.of("copy", "2 peers"));
        goals.addAll(List.of(0.9, 1.8));
        measured.addAll(List.of(copyRatio, speedup2));
        new BarChart(String.format(Locale.ROOT, "arrayd cluster: medians of %d rounds", rounds), "ratio", categories)
                .add("goal", goals)
                .add("measured", measured)
                .writePng(ctx.outDir().resolve("cluster.png"));

        String result = String.format(Locale.ROOT, "direct_us=%.1f entry_us=%.1f launch_ratio=%.3f%s copy_ms=%.1f raw_ms=%.1f "
                + "copy_ratio=%.3f speedup2=%.3f speedup3=%.3f local_speedup2=%.3f", direct, entry, launchRatio,
                sidecarResult, copyMs, rawMs, copyRatio, speedup2, speedup3, localSpeedup2);
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "cluster: %d rounds (%d warm-up)", rounds, warmup));
        lines.add(String.format(Locale.ROOT, "empty launch RT: direct %.1f us, through the entry daemon %.1f us (ratio %.2f)",
                direct, entry, launchRatio));
        for (int i = 0; i < delays.length; i++) {
            lines.add(String.format(Locale.ROOT, "over a %d µs network each way: direct %.1f us, through a sidecar entry %.1f us "
                    + "(ratio %.2f)", delays[i], sidecarMedians[i][0], sidecarMedians[i][1], sidecarMedians[i][2]));
        }
        lines.add(String.format(Locale.ROOT, "%d MiB peer to peer: copy %.1f ms, raw gRPC stream %.1f ms (throughput ratio %.2f)",
                sizeMib, copyMs, rawMs, copyRatio));
        lines.add(String.format(Locale.ROOT, "CPU per transfer, sending / receiving peer: copy %.0f / %.0f ms, raw %.0f / %.0f ms",
                median(copy[2]), median(copy[3]), median(copy[4]), median(copy[5])));
        lines.add(String.format(Locale.ROOT, "tasks/s on 1, 2, 3 one-thread peers: %.1f, %.1f, %.1f (speedup %.2f, %.2f)",
                perSecond[0], perSecond[1], perSecond[2], speedup2, speedup3));
        lines.add(String.format(Locale.ROOT, "tasks/s on 1, 2 one-thread devices of one daemon: %.1f, %.1f (speedup %.2f)",
                localPerSecond[0], localPerSecond[1], localSpeedup2));
        lines.add("results: " + ctx.outDir());
        String section = String.format(Locale.ROOT, """
                What is measured (%d rounds; every daemon a child process of the benchmark on loopback; launches' %s; \
                sidecar launches' %s; copies' %s; tasks' %s):

                - **remote launch:** a peer (`--devices cpu:1`) and an entry daemon (`--devices none --peers p=…`). Per \
                round, %d round trips of an empty IR launch (`global = [1]`, wait for its completion before the next) \
                sent to the peer directly (`cpu:0`) and as many through the entry daemon (`p/cpu:0`), which goes \
                first alternating by round; the round's median of each. Both daemons warm until their JITs are quiet.
                - **remote launch, sidecar shape:** the same launches where a pool is used: the client reaches its \
                entry daemon over the entry's Unix socket (`--uds`), and the entry reaches the peer over a network; \
                against it, the client sends the launch over that network to the peer itself. Loopback has no network \
                latency: a proxy in the benchmark, in front of the peer, holds every byte for a set time each way \
                before passing it on, so both paths cross the same emulated network once per round trip. The proxy's \
                own threads add their hand-offs and timer slack to the set delay: the direct column is what a round \
                trip across it costs. Warmed with no delay, then %d rounds at each delay.
                - **bulk copy:** two peers (`--devices cpu:1`; the second lists the first in its `peers`) and an entry \
                daemon listing both. A %d MiB buffer written on `p1/cpu:0` by a fill there is copied into a buffer on \
                `p2/cpu:0` (the second peer fetches the bytes from the first: `PeerService.Fetch`), timed from the copy's \
                submission to its completion; against it, the second peer streams as many raw bytes from the first \
                (`PeerService.MeasureLink`: the diagnostics source, 1 MiB chunks) between the same two processes. \
                The CPU time (user and system, in the kernel's ticks of 10 ms) of each peer process is read before \
                and after each transfer. The three daemons warm until their JITs are quiet.
                - **scaling:** three peers of one CPU device of one thread (`--devices cpu --cpu-threads 1`) and an \
                entry daemon listing them. A round launches %d independent tasks (Task Bench's compute-bound kernel, \
                %d iterations, one state buffer each) spread round-robin over the devices of the first k peers, and \
                waits for the last. Against it, what the machine gives two such threads without peers: the same \
                tasks sent directly to a daemon of two one-thread CPU devices (`--devices cpu:2 --cpu-threads 1`), \
                on one of them and on both. Rounds go 1, 2, 3 peers, 1, 2 local devices, then backwards. All daemons \
                warm until their JITs are quiet. This machine has %d cores for the benchmark, the daemons and \
                itself: past two busy threads there is no core left to gain.

                | measure | direct / raw | through the entry / peer copy | ratio | goal |
                | --- | --- | --- | --- | --- |
                | empty launch round trip | %.1f µs | %.1f µs | **%.2f** | ≤ 1.3 |
                | %d MiB between two peers | %.1f ms | %.1f ms | **%.2f** (throughput) | ≥ 0.9 |

                | emulated network, set delay each way | direct: client → network → peer | sidecar: client → Unix socket → entry → network → peer | ratio | goal |
                | --- | --- | --- | --- | --- |
                %s
                | CPU time per transfer (median) | raw stream | peer copy |
                | --- | --- | --- |
                | sending peer | %.0f ms | %.0f ms |
                | receiving peer | %.0f ms | %.0f ms |

                | one-thread peers | 1 | 2 | 3 |
                | --- | --- | --- | --- |
                | tasks/s | %.1f | %.1f | %.1f |
                | speedup | 1.00 | **%.2f** | %.2f |

                | one-thread devices of one daemon, no peers | 1 | 2 |
                | --- | --- | --- |
                | tasks/s | %.1f | %.1f |
                | speedup | 1.00 | %.2f |

                ![cluster](cluster.png)
                """, rounds, warm.describe(), sidecar.warm().describe(), copies.warm().describe(), scaled.warm().describe(),
                LAUNCHES_PER_ROUND, rounds, sizeMib, tasks, taskIterations,
                Runtime.getRuntime().availableProcessors(), direct, entry, launchRatio, sizeMib, rawMs, copyMs, copyRatio,
                sidecarRows.toString().stripTrailing(),
                median(copy[4]), median(copy[2]), median(copy[5]), median(copy[3]), perSecond[0], perSecond[1], perSecond[2],
                speedup2, speedup3, localPerSecond[0], localPerSecond[1], localSpeedup2);
        return new Report(lines, result, section);
    }

    private static String row(String name, double[] v, String unit) {
        return String.format(Locale.ROOT, "%s,%.3f,%.3f,%.3f,%s%n", name, median(v), Arrays.stream(v).min().orElse(0),
                Arrays.stream(v).max().orElse(0), unit);
    }

    static double median(double[] v) {
        return ThroughputScenario.median(v);
    }

    /** How the launches' warm-up went. */
    private JitWarmUp.Result warm;

    /** Per round: {median µs sent directly, median µs through the entry}, the two alternating which goes first. */
    private double[][] launches(Progress progress, int rounds, int warmup) throws Exception {
        double[][] out = new double[2][rounds];
        if (copyOnly) {
            return out;
        }
        progress.update("cluster: starting a peer and an entry daemon");
        try (DaemonChild peer = new DaemonChild(List.of("--devices", "cpu:1", "--metrics-port", "-1"));
             DaemonChild entry = new DaemonChild(List.of("--devices", "none", "--peers", "p=127.0.0.1:" + peer.port(),
                     "--metrics-port", "-1"));
             DaemonClient direct = DaemonClient.of(peer, "bench-cluster-direct");
             DaemonClient through = DaemonClient.of(entry, "bench-cluster-entry")) {
            Launch d = Launch.of(SidecarLaunches.empty(direct.session())).global(1).device("cpu:0");
            Launch t = Launch.of(SidecarLaunches.empty(through.session())).global(1).device("p/cpu:0");
            warm = JitWarmUp.run(progress, "cluster: launches", List.of(direct.channel(), through.channel()), List.of(),
                    warmup, options.warmupLimit(), () -> {
                        SidecarLaunches.roundTrips(direct.session(), d, LAUNCHES_PER_ROUND);
                        SidecarLaunches.roundTrips(through.session(), t, LAUNCHES_PER_ROUND);
                    });
            progress.line("cluster: launches " + warm.describe());
            for (int r = 0; r < rounds; r++) {
                progress.update(String.format(Locale.ROOT, "cluster: launches, round %d", r + 1));
                boolean directFirst = r % 2 == 0;
                double a = directFirst ? SidecarLaunches.roundTrips(direct.session(), d, LAUNCHES_PER_ROUND) : 0;
                double b = SidecarLaunches.roundTrips(through.session(), t, LAUNCHES_PER_ROUND);
                a = directFirst ? a : SidecarLaunches.roundTrips(direct.session(), d, LAUNCHES_PER_ROUND);
                out[0][r] = a;
                out[1][r] = b;
                progress.line(String.format(Locale.ROOT, "cluster: launch round %d/%d: direct %.1f us, entry %.1f us",
                        r + 1, rounds, a, b));
            }
        }
        return out;
    }

}
