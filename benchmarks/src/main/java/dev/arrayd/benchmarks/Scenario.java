package dev.arrayd.benchmarks;

/**
 * One benchmark scenario: {@code arrayd bench <name>}.
 *
 * <p>An implementation is also a picocli {@code @Command} whose name is the scenario's name; it mixes in
 * {@link BenchOptions} and may declare options of its own. {@link BenchMain} parses the command line,
 * prepares the {@link BenchContext} (results folder, a daemon to measure) and tears it down after
 * {@link #run} returns, then prints the report. Adding a scenario is one class plus one line in
 * {@link BenchMain#scenarios()}.
 */
public interface Scenario {

    /** The scenario's name on the command line, e.g. {@code "latency"}. */
    String name();

    /** The options every scenario shares, as parsed. */
    BenchOptions options();

    /**
     * Runs the measurement against {@code ctx.target()}, writes its files into {@code ctx.outDir()} and
     * returns what to print. Progress goes to {@code ctx.progress()}; stdout is left to {@link BenchMain}.
     */
    Report run(BenchContext ctx) throws Exception;

    /**
     * Whether the daemon the benchmark starts itself must allow native kernel source
     * ({@code --allow-native-source}); by default it runs with the daemon's default flags, IR kernels only.
     * Ignored with {@code --target}.
     */
    default boolean nativeSource() {
        return false;
    }

    /**
     * The {@code --devices} spec of the daemon the benchmark starts itself; null = the daemon's default.
     * Ignored with {@code --target}.
     */
    default String daemonDevices() {
        return null;
    }

    /**
     * Further {@code serve} arguments of the daemon the benchmark starts as a child process (e.g.
     * {@code --cpu-nice=0}); a scenario that has some refuses {@code --target} and {@code --in-process}.
     */
    default java.util.List<String> daemonArgs() {
        return java.util.List.of();
    }

    /**
     * Whether the scenario talks to a daemon; one that runs its backends in the benchmark's own process (no
     * daemon in the measured path) gets none started, and its context names no daemon ({@code port} 0).
     */
    default boolean usesDaemon() {
        return true;
    }
}
