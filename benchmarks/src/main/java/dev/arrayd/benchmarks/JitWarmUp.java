package dev.arrayd.benchmarks;

import dev.arrayd.proto.v1.GetStatsResponse;
import dev.arrayd.proto.v1.GetStatsRequest;
import dev.arrayd.server.JitThreadPriority;
import dev.arrayd.proto.v1.StatsServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A warm-up that lasts until the JIT compilers have gone quiet, instead of a fixed number of rounds.
 *
 * <p>A fresh daemon compiles its request paths in bursts for tens of seconds of traffic (on the
 * development VM its C2 thread took most of a core, on and off, for about 20 s); a fixed warm-up
 * either wastes time or measures those bursts. This runs warm-up rounds until, over the last
 * {@link #WINDOW}, the JIT compiler threads of every observed JVM (each daemon, through
 * {@code GetStats.jit_cpu_millis}; this one; any other the scenario names) used at most {@link #QUIET}
 * of a core — or until the time limit, which the result says. CPU time, not the JVM's compile time:
 * at a lowered priority ({@code jit-nice}) one compilation can run for seconds, and the compile time
 * counts it only when it ends.
 */
final class JitWarmUp {

    /** Sampling window. */
    static final Duration WINDOW = Duration.ofSeconds(5);
    /** JIT CPU time per wall time, in every observed JVM, below which the warm-up ends (1% of one core). */
    static final double QUIET = 0.01;

    /** One warm-up round. */
    @FunctionalInterface
    interface Round {
        void run() throws Exception;
    }

    /**
     * How the warm-up went.
     *
     * @param rounds     rounds run
     * @param seconds    how long they took
     * @param quiet      whether the JITs went quiet (false: the time limit ended it)
     * @param lastRate   the busiest JVM's compile time per wall time in the last window
     * @param observed   how many JVMs were observed (daemons answering GetStats, this one, extra ones)
     */
    record Result(int rounds, double seconds, boolean quiet, double lastRate, int observed) {

        /** e.g. "warm-up: 412 rounds in 31.2 s, until the JIT of 3 JVMs was quiet (0.4% in the last 2 s)". */
        String describe() {
            return String.format(Locale.ROOT, "warm-up: %d rounds in %.1f s, %s (busiest JIT %.1f%% of a core over the last "
                    + "%d s, %d JVMs observed)", rounds, seconds, quiet ? "until the JITs were quiet"
                    : "stopped by its time limit with a JIT still compiling", 100 * lastRate, WINDOW.toSeconds(), observed);
        }
    }

    private JitWarmUp() {}

    /**
     * This JVM's JIT cost so far in ms: its compiler threads' CPU time where Linux tells it (that also
     * counts a compilation still running), else the JVM's total compile time, else 0.
     */
    static long ownJitMillis() {
        long cpu = JitThreadPriority.compilerCpuMillis();
        if (cpu > 0) {
            return cpu;
        }
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
    }

    /** The same of a daemon, from {@code GetStats}; -1 where it cannot be asked (auth, an older daemon). */
    static long daemonJitMillis(ManagedChannel channel) {
        try {
            GetStatsResponse s = StatsServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .getStats(GetStatsRequest.newBuilder().setTopClients(1).build());
            var t = s.hasJitCpuTime() && (s.getJitCpuTime().getSeconds() > 0 || s.getJitCpuTime().getNanos() > 0)
                    ? s.getJitCpuTime() : s.getJitCompileTime();
            return t.getSeconds() * 1000 + t.getNanos() / 1_000_000;
        } catch (StatusRuntimeException e) {
            return -1;
        }
    }

    /**
     * Runs {@code round} at least {@code minRounds} times and then until the JITs are quiet or
     * {@code limit} has passed.
     *
     * @param daemons the daemons whose JIT to watch
     * @param extra   further compile-time counters (e.g. a child client's), in ms
     */
    static Result run(Progress progress, String label, List<ManagedChannel> daemons, List<LongSupplier> extra,
            int minRounds, Duration limit, Round round) throws Exception {
        List<LongSupplier> counters = new ArrayList<>();
        for (ManagedChannel ch : daemons) {
            if (daemonJitMillis(ch) >= 0) {
                counters.add(() -> Math.max(0, daemonJitMillis(ch)));
            }
        }
        counters.add(JitWarmUp::ownJitMillis);
        counters.addAll(extra);
        long[] last = new long[counters.size()];
        for (int i = 0; i < last.length; i++) {
            last[i] = counters.get(i).getAsLong();
        }
        long start = System.nanoTime();
        long windowStart = start;
        int rounds = 0;
        double rate = Double.NaN;
        while (true) {
            round.run();
            rounds++;
            long now = System.nanoTime();
            if (now - windowStart >= WINDOW.toNanos()) {
                double wallMs = (now - windowStart) / 1e6;
                rate = 0;
                for (int i = 0; i < last.length; i++) {
                    long v = counters.get(i).getAsLong();
                    rate = Math.max(rate, Math.max(0, v - last[i]) / wallMs); // a compiler thread that ended takes its time along
                    last[i] = v;
                }
                windowStart = now;
                BenchMain.OWN_JIT.apply(); // compiler threads the JVM started since
                progress.update(String.format(Locale.ROOT, "%s: warm-up round %d, %.0f s, busiest JIT %.0f%% of a core",
                        label, rounds, (now - start) / 1e9, 100 * rate));
                if (rounds >= minRounds && rate <= QUIET) {
                    return new Result(rounds, (now - start) / 1e9, true, rate, counters.size());
                }
            }
            if (now - start >= limit.toNanos() && rounds >= minRounds) {
                return new Result(rounds, (now - start) / 1e9, false, Double.isNaN(rate) ? 1 : rate, counters.size());
            }
        }
    }
}
