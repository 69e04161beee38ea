package dev.arrayd.benchmarks;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.Ir;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The remote launch in the shape a pool is used in: the client reaches an entry daemon (a sidecar) over its Unix
 * socket, and the entry reaches the peer over a network; against it, the client sends the same launch to the peer
 * over that network itself. Loopback has no network latency, so a {@link DelayProxy} in front of the peer holds
 * every byte for a set time each way; both paths cross it once per round trip.
 */
final class SidecarLaunches {

    /** Per delay, per round: {median µs sent to the peer through the delay, median µs through the sidecar}. */
    record Result(long[] oneWayMicros, double[][][] micros, JitWarmUp.Result warm) {}

    private SidecarLaunches() {}

    static Result run(Progress progress, long[] oneWayMicros, int rounds, int launchesPerRound, int warmup,
            java.time.Duration warmupLimit) throws Exception {
        double[][][] out = new double[oneWayMicros.length][2][rounds];
        Path dir = Files.createTempDirectory("arrayd-bench-sidecar");
        Path socket = dir.resolve("entry.sock");
        progress.update("cluster: starting a peer, a delaying proxy in front of it and a sidecar entry daemon");
        try (DaemonChild peer = new DaemonChild(List.of("--devices", "cpu:1", "--metrics-port", "-1"));
             DelayProxy network = new DelayProxy(peer.port());
             DaemonChild entry = new DaemonChild(List.of("--devices", "none", "--peers", "p=127.0.0.1:" + network.port(),
                     "--metrics-port", "-1", "--uds", socket.toString()));
             ArraydClient directClient = ArraydClient.connect("127.0.0.1:" + network.port());
             ArraydClient sidecarClient = ArraydClient.connect("unix://" + socket)) {
            Session direct = directClient.openSession("bench-cluster-direct-network").get(60, TimeUnit.SECONDS);
            Session sidecar = sidecarClient.openSession("bench-cluster-sidecar").get(60, TimeUnit.SECONDS);
            Launch d = Launch.of(empty(direct)).global(1).device("cpu:0");
            Launch s = Launch.of(empty(sidecar)).global(1).device("p/cpu:0");
            ManagedChannel peerStats = ManagedChannelBuilder.forAddress("127.0.0.1", peer.port()).usePlaintext().build();
            ManagedChannel entryStats = ManagedChannelBuilder.forAddress("127.0.0.1", entry.port()).usePlaintext().build();
            JitWarmUp.Result warm;
            try {
                network.oneWayMicros(0);
                warm = JitWarmUp.run(progress, "cluster: sidecar launches", List.of(peerStats, entryStats), List.of(),
                        warmup, warmupLimit, () -> {
                            roundTrips(direct, d, launchesPerRound);
                            roundTrips(sidecar, s, launchesPerRound);
                        });
            } finally {
                peerStats.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
                entryStats.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
            progress.line("cluster: sidecar launches " + warm.describe());
            for (int i = 0; i < oneWayMicros.length; i++) {
                network.oneWayMicros(oneWayMicros[i]);
                for (int r = 0; r < rounds; r++) {
                    progress.update(String.format(Locale.ROOT, "cluster: launches over a %d µs network, round %d",
                            oneWayMicros[i], r + 1));
                    boolean directFirst = r % 2 == 0;
                    double a = directFirst ? roundTrips(direct, d, launchesPerRound) : 0;
                    double b = roundTrips(sidecar, s, launchesPerRound);
                    a = directFirst ? a : roundTrips(direct, d, launchesPerRound);
                    out[i][0][r] = a;
                    out[i][1][r] = b;
                    progress.line(String.format(Locale.ROOT, "cluster: %d µs each way, round %d/%d: direct %.1f us, "
                            + "through the sidecar %.1f us", oneWayMicros[i], r + 1, rounds, a, b));
                }
            }
            direct.close();
            sidecar.close();
            return new Result(oneWayMicros.clone(), out, warm);
        } finally {
            Files.deleteIfExists(socket);
            Files.deleteIfExists(dir);
        }
    }

    /** Median µs of {@code n} launches of {@code l}, each waited for before the next. */
    static double roundTrips(Session s, Launch l, int n) throws Exception {
        double[] us = new double[n];
        for (int i = 0; i < us.length; i++) {
            long t0 = System.nanoTime();
            s.launch(l).future().get(60, TimeUnit.SECONDS);
            us[i] = (System.nanoTime() - t0) / 1e3;
        }
        return ClusterScenario.median(us);
    }

    static KernelHandle empty(Session s) throws Exception {
        return s.compile(KernelModuleSpec.ir(Ir.kernel("empty").body(b -> { }))).get(60, TimeUnit.SECONDS).get("empty");
    }
}
