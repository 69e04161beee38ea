package dev.arrayd.benchmarks;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The options every scenario takes (a picocli mixin). */
public final class BenchOptions {

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    boolean help;

    @Option(names = "--target", paramLabel = "HOST:PORT",
            description = "Measure an already running daemon instead of starting one (by default the benchmark "
                    + "starts the daemon as a child process on 127.0.0.1, any free port, native kernel source allowed).")
    String target;

    @Option(names = "--in-process",
            description = "Start the daemon inside the benchmark's JVM instead of as a child process "
                    + "(client and daemon then share one JVM; quicker to start, less like real use).")
    boolean inProcess;

    @Option(names = "--out", paramLabel = "DIR",
            description = "Results folder; default results/<scenario>-<yyyyMMdd-HHmmss> under the current directory.")
    Path out;

    @Option(names = "--iterations", paramLabel = "N",
            description = "Measured iterations per method; each scenario documents its default.")
    Integer iterations;

    @Option(names = "--warmup", paramLabel = "N",
            description = "Warm-up iterations per method before measuring; each scenario documents its default.")
    Integer warmup;

    @Option(names = "--warmup-seconds", paramLabel = "S",
            description = "Longest warm-up of the scenarios that warm up until the JITs are quiet (cluster, kernels, "
                    + "multidevice, padding, python, taskbench, tenants, throughput; "
                    + "default 120; 0 = only the --warmup rounds).")
    Integer warmupSeconds;

    /** {@code --warmup-seconds} (default 120 s). */
    public java.time.Duration warmupLimit() {
        if (warmupSeconds == null) {
            return java.time.Duration.ofSeconds(120);
        }
        if (warmupSeconds < 0) {
            throw new IllegalArgumentException("--warmup-seconds: " + warmupSeconds + " (expected: >= 0)");
        }
        return java.time.Duration.ofSeconds(warmupSeconds);
    }

    /** Whether to start the daemon in this JVM rather than as a child process. */
    public boolean inProcess() {
        return inProcess;
    }

    /** {@code --target}, or null to start a daemon. */
    public String target() {
        return target;
    }

    /** {@code --out}, or null for the default folder. */
    public Path out() {
        return out;
    }

    /** {@code --iterations}, or {@code dflt} when not given. */
    public int iterations(int dflt) {
        return positive("--iterations", iterations, dflt);
    }

    /** {@code --warmup}, or {@code dflt} when not given; 0 allowed. */
    public int warmup(int dflt) {
        if (warmup == null) {
            return dflt;
        }
        if (warmup < 0) {
            throw new IllegalArgumentException("--warmup: " + warmup + " (expected: >= 0)");
        }
        return warmup;
    }

    private static int positive(String name, Integer value, int dflt) {
        if (value == null) {
            return dflt;
        }
        if (value <= 0) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
        }
        return value;
    }
}
