package dev.arrayd.benchmarks;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Everything a scenario needs to run, prepared by {@link BenchMain}.
 *
 * @param host     the daemon's host (an in-process daemon listens on 127.0.0.1)
 * @param port     the daemon's port
 * @param inProcess whether {@link BenchMain} started the daemon in this JVM (client and server then share
 *                 the machine's cores, which a report should say)
 * @param outDir   the results folder; exists
 * @param progress where to report progress
 * @param unixSocket the daemon's Unix domain socket, when the benchmark started it with one (else null)
 * @param daemonPid the daemon's process id when the benchmark started it as a child process; -1 when it
 *                 runs in this JVM or was started by somebody else ({@code --target})
 */
public record BenchContext(String host, int port, boolean inProcess, Path outDir, Progress progress, Path unixSocket,
        long daemonPid) {

    public BenchContext(String host, int port, boolean inProcess, Path outDir, Progress progress) {
        this(host, port, inProcess, outDir, progress, null, -1);
    }

    public BenchContext(String host, int port, boolean inProcess, Path outDir, Progress progress, Path unixSocket) {
        this(host, port, inProcess, outDir, progress, unixSocket, -1);
    }

    public BenchContext {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(outDir, "outDir");
        Objects.requireNonNull(progress, "progress");
    }

    /** {@code host:port}, bracketing an IPv6 literal. */
    public String target() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
