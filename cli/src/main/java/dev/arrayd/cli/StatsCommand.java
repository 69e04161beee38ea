package dev.arrayd.cli;

import dev.arrayd.proto.v1.ClientStats;
import dev.arrayd.proto.v1.GetStatsResponse;
import dev.arrayd.proto.v1.DeviceStats;
import dev.arrayd.proto.v1.GetStatsRequest;
import dev.arrayd.proto.v1.StatsServiceGrpc;
import dev.arrayd.proto.v1.StreamQueue;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code arrayd stats}: a live view of a running daemon (devices, memory, queue depths, sessions,
 * top clients), redrawn in the terminal every {@code --interval}; {@code --once} prints one frame.
 * Fed by {@code StatsService.GetStats}, so it needs only the gRPC port.
 */
@Command(name = "stats", mixinStandardHelpOptions = true,
        description = "Live view of a running daemon: devices, memory, queue depths, sessions, top clients.")
final class StatsCommand implements Callable<Integer> {

    @Mixin
    ClientOptions client;

    @Option(names = "--interval", description = "Seconds between frames (default: ${DEFAULT-VALUE}).", defaultValue = "2")
    double interval;

    @Option(names = "--once", description = "Print one frame and exit (no screen clearing).")
    boolean once;

    @Option(names = "--top", description = "Clients to list, busiest first (default: ${DEFAULT-VALUE}).", defaultValue = "10")
    int top;

    @Override
    public Integer call() throws Exception {
        if (!(interval >= 0.1)) {
            System.err.println("arrayd stats: --interval " + interval + " (expected: >= 0.1 seconds)");
            return 2;
        }
        ManagedChannel channel = client.channel();
        try {
            var stub = StatsServiceGrpc.newBlockingStub(channel);
            GetStatsRequest req = GetStatsRequest.newBuilder().setTopClients(Math.max(1, top)).build();
            GetStatsResponse previous = null;
            long previousAt = 0;
            while (true) {
                GetStatsResponse s = stub.withDeadlineAfter(10, TimeUnit.SECONDS).getStats(req);
                long now = System.nanoTime();
                double rate = previous == null ? Double.NaN
                        : (total(s) - total(previous)) / ((now - previousAt) / 1e9);
                if (!once) {
                    System.out.print("\033[H\033[2J"); // home + clear: redraw in place
                }
                render(System.out, s, rate);
                System.out.flush();
                if (once) {
                    return 0;
                }
                previous = s;
                previousAt = now;
                Thread.sleep((long) (interval * 1000));
            }
        } catch (StatusRuntimeException e) {
            return Failures.report("stats", client.target, e);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static double seconds(com.google.protobuf.Duration d) {
        return d.getSeconds() + d.getNanos() / 1e9;
    }

    private static long total(GetStatsResponse s) {
        return s.getCommandsSucceeded() + s.getCommandsFailed();
    }

    void render(PrintStream out, GetStatsResponse s, double rate) {
        long up = s.getUptime().getSeconds();
        out.printf(Locale.ROOT, "arrayd %s at %s   up %dh%02dm%02ds   sessions %d   commands %d ok, %d failed%s   jit %.1f s%s%n",
                s.getVersion(), client.target, up / 3600, up / 60 % 60, up % 60, s.getSessions(),
                s.getCommandsSucceeded(), s.getCommandsFailed(),
                Double.isNaN(rate) ? "" : String.format(Locale.ROOT, "   %.0f commands/s", rate),
                seconds(s.getJitCpuTime().getSeconds() > 0 || s.getJitCpuTime().getNanos() > 0 ? s.getJitCpuTime()
                        : s.getJitCompileTime()),
                s.getShuttingDown() ? "   SHUTTING DOWN" : "");
        out.println();
        out.printf("%-10s %12s %12s %12s %12s %6s %8s %10s%n", "DEVICE", "USED", "RESERVED", "BUDGET", "CAPACITY",
                "FRAG", "Q-SHARED", "Q-DEDICATED");
        for (DeviceStats d : s.getDevicesList()) {
            long shared = 0;
            long dedicated = 0;
            for (StreamQueue q : d.getQueuesList()) {
                if (q.getKind().equals("shared")) {
                    shared = q.getPendingCommands();
                } else {
                    dedicated += q.getPendingCommands();
                }
            }
            out.printf(Locale.ROOT, "%-10s %12s %12s %12s %12s %6.2f %8d %10d%n", d.getId(),
                    DevicesCommand.bytes(d.getMemoryUsedBytes()), DevicesCommand.bytes(d.getMemoryReservedBytes()),
                    DevicesCommand.bytes(d.getMemoryBudgetBytes()), DevicesCommand.bytes(d.getMemoryBytes()),
                    d.getFragmentation(), shared, dedicated);
        }
        out.println();
        out.printf("%-24s %9s %12s %10s%n", "CLIENT", "SESSIONS", "COMMANDS", "FAILED");
        if (s.getTopClientsCount() == 0) {
            out.println("(no clients yet)");
        }
        for (ClientStats c : s.getTopClientsList()) {
            out.printf("%-24s %9d %12d %10d%n", c.getClient(), c.getSessions(), c.getCommands(), c.getCommandsFailed());
        }
    }
}
