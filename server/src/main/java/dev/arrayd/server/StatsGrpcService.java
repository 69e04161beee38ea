package dev.arrayd.server;

import dev.arrayd.proto.v1.ClientStats;
import dev.arrayd.proto.v1.GetStatsResponse;
import dev.arrayd.proto.v1.DeviceStats;
import dev.arrayd.proto.v1.GetStatsRequest;
import dev.arrayd.proto.v1.StatsServiceGrpc;
import dev.arrayd.proto.v1.StreamQueue;
import dev.arrayd.scheduler.CommandOutcome;
import dev.arrayd.scheduler.DeviceRuntime;
import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.scheduler.SlabPoolStats;
import dev.arrayd.scheduler.StreamKind;
import dev.arrayd.server.metrics.ArraydMetrics;
import dev.arrayd.server.metrics.ClientMeters;
import io.grpc.stub.StreamObserver;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.Comparator;
import java.util.List;

/** {@code StatsService.GetStats}: what {@code arrayd stats} shows. Reads counters; never blocks long. */
final class StatsGrpcService extends StatsServiceGrpc.StatsServiceImplBase {

    private final Scheduler scheduler;
    private final ArraydMetrics metrics;
    private final String version;
    private final long startedNanos = System.nanoTime();

    StatsGrpcService(Scheduler scheduler, ArraydMetrics metrics, String version) {
        this.scheduler = scheduler;
        this.metrics = metrics;
        this.version = version;
    }

    @Override
    public void getStats(GetStatsRequest req, StreamObserver<GetStatsResponse> out) {
        Calls.unary(out, () -> {
            GetStatsResponse.Builder b = GetStatsResponse.newBuilder().setVersion(version)
                    .setUptime(ProtoTime.ofNanos(System.nanoTime() - startedNanos))
                    .setShuttingDown(scheduler.isShuttingDown())
                    .setSessions(scheduler.sessions().size())
                    .setCommandsSucceeded(metrics.commands(CommandOutcome.SUCCEEDED))
                    .setCommandsFailed(metrics.commands(CommandOutcome.FAILED)
                            + metrics.commands(CommandOutcome.DEPENDENCY_FAILED) + metrics.commands(CommandOutcome.ABORTED))
                    .setJitCompileTime(ProtoTime.ofMillis(jitCompileMillis()))
                    .setJitCpuTime(ProtoTime.ofMillis(JitThreadPriority.compilerCpuMillis()));
            for (DeviceRuntime d : scheduler.devices()) {
                SlabPoolStats p = d.pool().stats();
                DeviceStats.Builder ds = DeviceStats.newBuilder().setId(d.id().toString())
                        .setMemoryBytes(d.info().memoryBytes()).setMemoryBudgetBytes(p.budgetBytes())
                        .setMemoryUsedBytes(p.usedBytes()).setMemoryReservedBytes(p.reservedBytes())
                        .setFragmentation(p.fragmentation()).setServing(!scheduler.isShuttingDown() && d.isReachable());
                for (StreamKind k : StreamKind.values()) {
                    ds.addQueues(StreamQueue.newBuilder().setKind(k.label()).setPendingCommands(d.pendingCommands(k)));
                }
                b.addDevices(ds);
            }
            // uint32: 0 for the default, and any larger count means "all of them"
            long top = req.getTopClients() == 0 ? 10 : Wire.u32(req.getTopClients());
            List<ClientMeters> clients = metrics.clients().stream()
                    .filter(c -> c.commands() > 0 || c.sessionsOpen() > 0)
                    .sorted(Comparator.comparingLong(ClientMeters::commands).reversed()
                            .thenComparing(Comparator.comparingInt(ClientMeters::sessionsOpen).reversed()))
                    .limit(top).toList();
            for (ClientMeters c : clients) {
                b.addTopClients(ClientStats.newBuilder().setClient(c.label()).setSessions(c.sessionsOpen())
                        .setCommands(c.commands()).setCommandsFailed(c.commandFailures()));
            }
            return b.build();
        });
    }

    /** The JIT's total compilation time, or 0 where the JVM does not keep it. */
    static long jitCompileMillis() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
    }
}
