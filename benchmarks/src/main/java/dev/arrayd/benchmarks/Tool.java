package dev.arrayd.benchmarks;

import java.io.PrintStream;

/**
 * A {@code bench} subcommand that is not a scenario ({@code jmh}, {@code report}): it starts no daemon.
 * An implementation is a picocli {@code @Command}; {@link BenchMain} parses its options and calls
 * {@link #run}.
 */
interface Tool {

    /** Runs the command; returns the exit code. Output goes to {@code out}, progress to {@code progress}. */
    int run(PrintStream out, Progress progress) throws Exception;
}
