package dev.arrayd.benchmarks;

import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.BufferOptions;
import dev.arrayd.client.DType;
import dev.arrayd.client.Event;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * {@code bench cluster}'s scaling: independent compute-bound tasks on 1, 2 and 3 one-thread peers through an entry
 * daemon, against the same tasks on 1 and 2 one-thread devices of one daemon sent to directly.
 */
final class ScalingTasks {

    /** Per configuration (1, 2, 3 peers; 1, 2 local devices), per round: tasks per second. */
    record Result(double[][] perSecond, JitWarmUp.Result warm) {}

    private ScalingTasks() {}

    /**
     * Per round: tasks per second on 1, 2 and 3 peers through the entry daemon, then on 1 and 2 one-thread devices of
     * one daemon sent to directly (what the machine gives two such threads without peers).
     */
    static Result run(Progress progress, int tasks, long taskIterations, int rounds, int warmup, Duration warmupLimit)
            throws Exception {
        double[][] out = new double[5][rounds];
        JitWarmUp.Result warm;
        progress.update("cluster: starting three one-thread peers, an entry daemon and a daemon of two one-thread devices");
        List<String> oneThread = List.of("--devices", "cpu", "--cpu-threads", "1", "--metrics-port", "-1");
        try (DaemonChild p1 = new DaemonChild(oneThread); DaemonChild p2 = new DaemonChild(oneThread);
             DaemonChild p3 = new DaemonChild(oneThread);
             DaemonChild entry = new DaemonChild(List.of("--devices", "none", "--metrics-port", "-1", "--peers",
                     "p1=127.0.0.1:" + p1.port() + ",p2=127.0.0.1:" + p2.port() + ",p3=127.0.0.1:" + p3.port()));
             DaemonChild local = new DaemonChild(List.of("--devices", "cpu:2", "--cpu-threads", "1", "--metrics-port", "-1"));
             DaemonClient c = DaemonClient.of(entry, "bench-cluster-scaling");
             DaemonClient lc = DaemonClient.of(local, "bench-cluster-local")) {
            Tasks peers = Tasks.on(c.session(), List.of("p1/cpu:0", "p2/cpu:0", "p3/cpu:0"), tasks);
            Tasks devices = Tasks.on(lc.session(), List.of("cpu:0", "cpu:1"), tasks);
            List<ManagedChannel> stats = new ArrayList<>(List.of(c.channel(), lc.channel()));
            for (DaemonChild peer : List.of(p1, p2, p3)) {
                stats.add(ManagedChannelBuilder.forAddress("127.0.0.1", peer.port()).usePlaintext().build());
            }
            try {
                warm = JitWarmUp.run(progress, "cluster: tasks", stats, List.of(), warmup, warmupLimit, () -> {
                    for (int p = 1; p <= 3; p++) {
                        tasksRound(peers, p, tasks, taskIterations);
                    }
                    tasksRound(devices, 1, tasks, taskIterations);
                    tasksRound(devices, 2, tasks, taskIterations);
                });
            } finally {
                for (ManagedChannel ch : stats.subList(2, stats.size())) {
                    ch.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
                }
            }
            progress.line("cluster: tasks " + warm.describe());
            for (int r = 0; r < rounds; r++) {
                for (int i = 0; i < 5; i++) {
                    int which = r % 2 == 0 ? i : 4 - i; // forwards then backwards: host drift weighs on all alike
                    boolean onPeers = which < 3;
                    int n = onPeers ? which + 1 : which - 2;
                    String where = onPeers ? n + " peers" : n + " local devices";
                    progress.update(String.format(Locale.ROOT, "cluster: tasks on %s, round %d", where, r + 1));
                    double perSecond = tasksRound(onPeers ? peers : devices, n, tasks, taskIterations);
                    out[which][r] = perSecond;
                    progress.line(String.format(Locale.ROOT, "cluster: tasks round %d/%d on %s: %.1f tasks/s",
                            r + 1, rounds, where, perSecond));
                }
            }
        }
        return new Result(out, warm);
    }

    /** The compute kernel compiled in {@code session}, and a state buffer per task and device. */
    private record Tasks(Session session, KernelHandle kernel, List<String> devices, List<BufferHandle> states) {
        static Tasks on(Session s, List<String> devices, int tasks) throws Exception {
            KernelHandle k = s.compile(KernelModuleSpec.ir(ComputeKernel.ir())).get(120, TimeUnit.SECONDS)
                    .get(ComputeKernel.NAME);
            List<BufferHandle> states = new ArrayList<>();
            for (int t = 0; t < tasks; t++) {
                // one state buffer per task and device, so that no task waits for a transfer
                for (String d : devices) {
                    states.add(s.createBuffer(DType.F64, new long[] {ComputeKernel.STATE_DOUBLES},
                            BufferOptions.defaults().device(d)).get(60, TimeUnit.SECONDS));
                }
            }
            return new Tasks(s, k, devices, states);
        }
    }

    /** The round's tasks spread round-robin over the first {@code n} devices of {@code on}: tasks per second. */
    private static double tasksRound(Tasks on, int n, int tasks, long taskIterations) throws Exception {
        long t0 = System.nanoTime();
        List<Event> events = new ArrayList<>();
        int width = on.devices().size();
        for (int t = 0; t < tasks; t++) {
            int d = t % n;
            events.add(on.session().launch(Launch.of(on.kernel()).global(1).args(on.states().get(t * width + d),
                    taskIterations).device(on.devices().get(d))));
        }
        for (Event e : events) {
            e.future().get(300, TimeUnit.SECONDS);
        }
        return tasks / ((System.nanoTime() - t0) / 1e9);
    }
}
