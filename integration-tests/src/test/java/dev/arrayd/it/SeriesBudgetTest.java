package dev.arrayd.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.proto.v1.BufferServiceGrpc;
import dev.arrayd.proto.v1.DeviceServiceGrpc;
import dev.arrayd.proto.v1.DiagnosticsServiceGrpc;
import dev.arrayd.proto.v1.ExecutionServiceGrpc;
import dev.arrayd.proto.v1.KernelServiceGrpc;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import dev.arrayd.proto.v1.SharingServiceGrpc;
import dev.arrayd.proto.v1.StatsServiceGrpc;
import dev.arrayd.server.ArraydServer;
import dev.arrayd.server.RawCalls;
import dev.arrayd.server.ServerOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The series one daemon exports stay within the budget docs/operations.md states ("Series budget"), in
 * the worst case it names: every RPC called and failing, more client names than the label limit.
 */
class SeriesBudgetTest {

    /** The budget docs/operations.md states for a daemon of one device, and what each further device adds. */
    static final int BUDGET_ONE_DEVICE = 1000;
    static final int PER_DEVICE = 145;

    static final List<ServiceDescriptor> SERVICES = List.of(DeviceServiceGrpc.getServiceDescriptor(),
            SessionServiceGrpc.getServiceDescriptor(), BufferServiceGrpc.getServiceDescriptor(),
            KernelServiceGrpc.getServiceDescriptor(), ExecutionServiceGrpc.getServiceDescriptor(),
            SharingServiceGrpc.getServiceDescriptor(), dev.arrayd.proto.v1.RegionServiceGrpc.getServiceDescriptor(),
            DiagnosticsServiceGrpc.getServiceDescriptor(),
            StatsServiceGrpc.getServiceDescriptor(), HealthGrpc.getServiceDescriptor(),
            io.grpc.reflection.v1.ServerReflectionGrpc.getServiceDescriptor(),
            io.grpc.reflection.v1alpha.ServerReflectionGrpc.getServiceDescriptor());

    @Test
    void everyRpcCalledAndManyClientsStayWithinTheBudget() throws Exception {
        int one = (int) series("cpu").count();
        long second = series("cpu:2").filter(l -> l.contains("device=\"cpu:1\"")).count();
        System.out.printf("series with one device: %d; a second device's: %d%n", one, second);
        assertTrue(one <= BUDGET_ONE_DEVICE, "series: " + one + " (budget " + BUDGET_ONE_DEVICE + ")");
        assertEquals(PER_DEVICE, second, "series of each further device");
    }

    /** The series a daemon with these devices exports once every RPC was called and many clients came. */
    static java.util.stream.Stream<String> series(String devices) throws Exception {
        try (ArraydServer server = ArraydServer.start(ServerOptions.defaults().withPort(0).withCpuMemoryBytes(64L << 20)
                .withShutdownGraceMillis(0).withDevices(devices))) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
            try {
                int methods = 0;
                for (ServiceDescriptor s : SERVICES) {
                    for (MethodDescriptor<?, ?> m : s.getMethods()) {
                        methods++;
                        if (m.equals(HealthGrpc.getWatchMethod())) {
                            // a stream that never ends by itself: watched until a short deadline
                            var watch = HealthGrpc.newBlockingStub(channel).withDeadlineAfter(200, TimeUnit.MILLISECONDS)
                                    .watch(io.grpc.health.v1.HealthCheckRequest.getDefaultInstance());
                            org.junit.jupiter.api.Assertions.assertThrows(io.grpc.StatusRuntimeException.class,
                                    () -> watch.forEachRemaining(r -> { }));
                            continue;
                        }
                        RawCalls.call(channel, m, new byte[] {(byte) 0xff}); // unparseable: INVALID_ARGUMENT
                        RawCalls.call(channel, m, new byte[0]);              // empty: whatever the method answers
                    }
                }
                var sessions = SessionServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
                for (int i = 0; i < ServerOptions.DEFAULT_METRICS_CLIENT_LIMIT + 10; i++) {
                    sessions.openSession(OpenSessionRequest.newBuilder().setClientName("client-" + i).build());
                }
                Map<String, Integer> byFamily = new TreeMap<>();
                List<String> lines;
                try (HttpClient http = HttpClient.newHttpClient()) {
                    lines = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.metricsPort()
                            + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body().lines()
                            .filter(l -> !l.isBlank() && !l.startsWith("#")).toList();
                }
                for (String line : lines) {
                    String name = line.substring(0, line.indexOf(line.contains("{") ? '{' : ' '));
                    byFamily.merge(name.replaceAll("_(bucket|count|sum|max)$", ""), 1, Integer::sum);
                }
                int series = lines.size();
                int grpcHandling = byFamily.getOrDefault("grpc_server_handling_seconds", 0);
                System.out.printf("series: %d in all for %d methods and %d client names; grpc_server_handling_seconds "
                        + "%d (%.0f%%)%n", series, methods, ServerOptions.DEFAULT_METRICS_CLIENT_LIMIT + 10, grpcHandling,
                        100.0 * grpcHandling / series);
                assertEquals(methods * (dev.arrayd.server.metrics.ArraydMetrics.GRPC_BUCKETS.length + 4), grpcHandling,
                        "per method: the buckets, +Inf, _count, _sum and _max");
                return lines.stream();
            } finally {
                channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
        }
    }
}
