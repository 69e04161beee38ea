package dev.arrayd.benchmarks;

import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.BufferOptions;
import dev.arrayd.client.DType;
import dev.arrayd.client.Session;
import dev.arrayd.proto.v1.MeasureLinkRequest;
import dev.arrayd.proto.v1.PeerServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * {@code bench cluster}'s bulk copy: a buffer copied from a device of one peer to a device of another through an
 * entry daemon (the receiving peer fetches it from the sending one), against raw gRPC streaming of as many bytes
 * between the same two processes, with each peer's CPU time over each transfer.
 */
final class PeerCopies {

    /** Per round: {copy ms, raw ms, CPU ms of the sender and receiver during the copy, during the stream}. */
    record Result(double[][] perRound, JitWarmUp.Result warm) {}

    private PeerCopies() {}

    /** {@code rounds} rounds of {@code sizeMib} MiB each way, after a warm-up until the three daemons' JITs are quiet. */
    static Result run(Progress progress, int sizeMib, int rounds, int warmup, Duration warmupLimit) throws Exception {
        long bytes = (long) sizeMib << 20;
        String memory = Long.toString(Math.max(1L << 30, 2 * bytes));
        double[][] out = new double[6][rounds];
        JitWarmUp.Result warm;
        progress.update("cluster: starting two peers and an entry daemon");
        try (DaemonChild p1 = new DaemonChild(List.of("--devices", "cpu:1", "--cpu-memory", memory, "--metrics-port", "-1"));
             DaemonChild p2 = new DaemonChild(List.of("--devices", "cpu:1", "--cpu-memory", memory, "--metrics-port", "-1",
                     "--peers", "p1=127.0.0.1:" + p1.port()));
             DaemonChild entry = new DaemonChild(List.of("--devices", "none", "--metrics-port", "-1", "--peers",
                     "p1=127.0.0.1:" + p1.port() + ",p2=127.0.0.1:" + p2.port()));
             DaemonClient c = DaemonClient.of(entry, "bench-cluster-copy")) {
            ManagedChannel toP2 = ManagedChannelBuilder.forAddress("127.0.0.1", p2.port()).usePlaintext().build();
            try {
                Session s = c.session();
                BufferHandle src = s.createBuffer(DType.U8, new long[] {bytes}, BufferOptions.defaults().device("p1/cpu:0"))
                        .get(60, TimeUnit.SECONDS);
                BufferHandle dst = s.createBuffer(DType.U8, new long[] {bytes}, BufferOptions.defaults().device("p2/cpu:0"))
                        .get(60, TimeUnit.SECONDS);
                var measure = MeasureLinkRequest.newBuilder().setTarget("127.0.0.1:" + p1.port()).setBytes(bytes)
                        .setChunkBytes(1 << 20).build();
                ManagedChannel toP1 = ManagedChannelBuilder.forAddress("127.0.0.1", p1.port()).usePlaintext().build();
                try {
                    int[] warmRounds = {0};
                    warm = JitWarmUp.run(progress, "cluster: copies", List.of(c.channel(), toP1, toP2), List.of(), warmup,
                            warmupLimit, () -> copyRound(s, src, dst, p1, p2, toP2, measure, warmRounds[0]++));
                } finally {
                    toP1.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
                }
                progress.line("cluster: copies " + warm.describe());
                for (int r = 0; r < rounds; r++) {
                    progress.update(String.format(Locale.ROOT, "cluster: %d MiB copies, round %d", sizeMib, r + 1));
                    double[] got = copyRound(s, src, dst, p1, p2, toP2, measure, r);
                    for (int i = 0; i < got.length; i++) {
                        out[i][r] = got[i];
                    }
                    progress.line(String.format(Locale.ROOT, "cluster: copy round %d/%d: peer copy %.1f ms (CPU: source "
                            + "%.0f ms, receiver %.0f ms), raw %.1f ms (CPU: %.0f ms, %.0f ms)", r + 1, rounds, got[0],
                            got[2], got[3], got[1], got[4], got[5]));
                }
                byte[] head = s.read(dst, 0, 16).get(60, TimeUnit.SECONDS).array();
                if (head[0] != (byte) ((rounds - 1 + 7) & 0x7f)) {
                    throw new IllegalStateException("the copy on p2 does not hold the last fill of p1 (" + head[0] + ")");
                }
            } finally {
                toP2.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
        }
        return new Result(out, warm);
    }

    /**
     * One copy from p1 to p2 (a fill on p1 first, so that p1 holds the only current replica) and one raw stream
     * between the same two: {copy ms, raw ms, CPU ms of p1 and p2 during the copy, of p1 and p2 during the stream}.
     */
    private static double[] copyRound(Session s, BufferHandle src, BufferHandle dst, DaemonChild p1, DaemonChild p2,
            ManagedChannel toP2, MeasureLinkRequest measure, int r) throws Exception {
        s.fill(src, (r + 7) & 0x7f).future().get(120, TimeUnit.SECONDS); // current on p1 only
        long[] cpu0 = {cpuNanos(p1), cpuNanos(p2)};
        long t0 = System.nanoTime();
        s.copy(src, dst).future().get(300, TimeUnit.SECONDS);
        double copyMs = (System.nanoTime() - t0) / 1e6;
        long[] cpu1 = {cpuNanos(p1), cpuNanos(p2)};
        long t1 = System.nanoTime();
        PeerServiceGrpc.newBlockingStub(toP2).withDeadlineAfter(300, TimeUnit.SECONDS).measureLink(measure);
        double rawMs = (System.nanoTime() - t1) / 1e6;
        long[] cpu2 = {cpuNanos(p1), cpuNanos(p2)};
        return new double[] {copyMs, rawMs, (cpu1[0] - cpu0[0]) / 1e6, (cpu1[1] - cpu0[1]) / 1e6,
                (cpu2[0] - cpu1[0]) / 1e6, (cpu2[1] - cpu1[1]) / 1e6};
    }

    /** CPU time (user and system) of a daemon child so far; the kernel counts it in ticks of 10 ms. */
    static long cpuNanos(DaemonChild d) {
        return ProcessHandle.of(d.pid()).flatMap(h -> h.info().totalCpuDuration()).map(java.time.Duration::toNanos)
                .orElse(0L);
    }

}
