package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.client.Access;
import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.DType;
import dev.arrayd.client.Dialect;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.KernelSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** A real daemon on loopback, real work through the Java client, then /metrics scraped over HTTP. */
class MetricsEndpointTest {

    static final KernelSpec VADD_SIG = KernelSpec.entry("vadd").buffer("a", DType.F32, Access.READ)
            .buffer("b", DType.F32, Access.READ).buffer("c", DType.F32, Access.WRITE).scalar("n", DType.I32);

    static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(60, TimeUnit.SECONDS);
    }

    static HttpResponse<String> scrape(int port, String accept) throws Exception {
        HttpRequest.Builder r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"));
        if (accept != null) {
            r.header("Accept", accept);
        }
        try (HttpClient http = HttpClient.newHttpClient()) {
            return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    /** The value of the one sample whose name and labels match (labels as a regex fragment). */
    static double sample(String body, String name, String labels) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{" + labels + "\\} (\\S+)$").matcher(body);
        assertTrue(m.find(), () -> "no sample " + name + "{" + labels + "} in:\n" + body);
        return Double.parseDouble(m.group(1));
    }

    @Test
    void everyFamilyIsScrapedWithValuesFromRealWork() throws Exception {
        ServerOptions options = ServerOptions.defaults().withPort(0).withAllowNativeSource(true)
                .withCpuMemoryBytes(256L << 20);
        int n = 4096;
        try (ArraydServer server = ArraydServer.start(options)) {
            assertTrue(server.metricsPort() > 0, "port 0 moves the default metrics port to a free one");
            try (ArraydClient c = ArraydClient.connect("127.0.0.1:" + server.port());
                    Session s = await(c.openSession("metrics-test"))) {
                BufferHandle a = await(s.createBuffer(DType.F32, n));
                BufferHandle b = await(s.createBuffer(DType.F32, n));
                BufferHandle out = await(s.createBuffer(DType.F32, n));
                s.write(a, new float[n]);
                s.write(b, new float[n]);
                KernelHandle vadd = await(s.compile(KernelModuleSpec.of(Dialect.C, """
                        ARRAYD_KERNEL void vadd(ARRAYD_ITEM, const float *a, const float *b, float *c, int32_t n) {
                            int64_t i = arrayd_global_id(0);
                            if (i < n) c[i] = a[i] + b[i] + 1;
                        }
                        """, VADD_SIG))).get("vadd");
                await(s.launch(Launch.of(vadd).global(n).args(a, b, out, n)).future());
                float[] result = await(s.readFloats(out));
                assertEquals(1f, result[n - 1]);

                HttpResponse<String> r = scrape(server.metricsPort(), null);
                assertEquals(200, r.statusCode());
                assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
                String m = r.body();
                assertEquals(1, sample(m, "arrayd_commands_total", "kind=\"launch\",outcome=\"succeeded\""));
                assertTrue(sample(m, "arrayd_commands_total", "kind=\"upload\",outcome=\"succeeded\"") >= 2);
                assertTrue(sample(m, "arrayd_commands_total", "kind=\"download\",outcome=\"succeeded\"") >= 1);
                assertEquals(0, sample(m, "arrayd_commands_total", "kind=\"launch\",outcome=\"failed\""));
                assertEquals(2.0 * 4 * n, sample(m, "arrayd_transferred_bytes_total",
                        "device=\"cpu:0\",direction=\"host_to_device\""));
                assertEquals(4.0 * n, sample(m, "arrayd_transferred_bytes_total",
                        "device=\"cpu:0\",direction=\"device_to_host\""));
                assertTrue(sample(m, "arrayd_compute_seconds_count", "device=\"cpu:0\"") >= 1, "the launch (and fills)");
                assertTrue(sample(m, "arrayd_queue_wait_seconds_count", "device=\"cpu:0\"") >= 4);
                assertTrue(sample(m, "arrayd_queue_wait_seconds_bucket", "device=\"cpu:0\",le=\"\\+Inf\"") >= 4);
                assertTrue(sample(m, "arrayd_transfer_seconds_count", "device=\"cpu:0\",direction=\"host_to_device\"") >= 2);
                assertEquals(3.0 * 4 * n, sample(m, "arrayd_device_memory_used_bytes", "device=\"cpu:0\""));
                assertEquals(256.0 * (1 << 20), sample(m, "arrayd_device_memory_capacity_bytes", "device=\"cpu:0\""));
                assertTrue(sample(m, "arrayd_device_memory_budget_bytes", "device=\"cpu:0\"") > 0);
                assertTrue(sample(m, "arrayd_device_memory_reserved_bytes", "device=\"cpu:0\"") >= 3.0 * 4 * n);
                double frag = sample(m, "arrayd_pool_fragmentation_ratio", "device=\"cpu:0\"");
                assertTrue(frag >= 0 && frag <= 1, "fragmentation " + frag);
                assertEquals(0, sample(m, "arrayd_pool_evictions_total", "device=\"cpu:0\""));
                assertEquals(0, sample(m, "arrayd_queue_depth", "device=\"cpu:0\",stream=\"shared\""));
                assertEquals(0, sample(m, "arrayd_queue_depth", "device=\"cpu:0\",stream=\"dedicated\""));
                assertEquals(1, sample(m, "arrayd_compiles_total", "backend=\"cpu\",outcome=\"succeeded\""));
                assertEquals(1, sample(m, "arrayd_compile_seconds_count", "backend=\"cpu\""));
                assertTrue(m.contains("\narrayd_sessions 1.0\n"), m);
                assertEquals(1, sample(m, "arrayd_client_sessions", "client=\"metrics-test\""));
                assertTrue(sample(m, "arrayd_client_commands_total", "client=\"metrics-test\"") >= 4);
                assertEquals(1, sample(m, "grpc_server_handled_total", "grpc_code=\"OK\",grpc_method=\"OpenSession\","
                        + "grpc_service=\"arrayd.v1.SessionService\",grpc_type=\"unary\""));
                assertTrue(sample(m, "grpc_server_started_total", "grpc_method=\"Execute\","
                        + "grpc_service=\"arrayd.v1.ExecutionService\",grpc_type=\"bidi_stream\"") >= 1);
                assertTrue(m.contains("grpc_server_handling_seconds_bucket{"), "gRPC latency histogram");
                assertTrue(m.contains("\njvm_memory_used_bytes{"), "JVM metrics");
                assertTrue(m.contains("\nprocess_uptime_seconds "), "process metrics");
                assertTrue(m.contains("\narrayd_shutting_down 0.0\n"));
                assertTrue(m.contains("# TYPE arrayd_queue_wait_seconds histogram"), "queue wait is a histogram");

                HttpResponse<String> om = scrape(server.metricsPort(), "application/openmetrics-text; version=1.0.0");
                assertTrue(om.headers().firstValue("Content-Type").orElse("").startsWith("application/openmetrics-text"));
                assertTrue(om.body().endsWith("# EOF\n"), "OpenMetrics ends with # EOF");
                assertTrue(om.body().contains("arrayd_commands_total{kind=\"launch\",outcome=\"succeeded\"} 1.0"));
            }
        }
    }

    @Test
    void clientLabelsAreBoundedByTheLimit() throws Exception {
        ServerOptions options = ServerOptions.defaults().withPort(0).withCpuMemoryBytes(64L << 20).withMetricsClientLimit(2);
        try (ArraydServer server = ArraydServer.start(options);
                ArraydClient c = ArraydClient.connect("127.0.0.1:" + server.port())) {
            for (String name : new String[] {"alpha", "beta", "gamma", "delta", "alpha"}) {
                Session s = await(c.openSession(name));
                await(s.createBuffer(DType.F32, 16));
            }
            String m = scrape(server.metricsPort(), null).body();
            assertEquals(2, sample(m, "arrayd_client_sessions", "client=\"alpha\""));
            assertEquals(1, sample(m, "arrayd_client_sessions", "client=\"beta\""));
            assertEquals(2, sample(m, "arrayd_client_sessions", "client=\"other\""), "gamma and delta");
            assertTrue(!m.contains("client=\"gamma\""), "no label beyond the limit");
        }
    }

    @Test
    void unknownPathsAre404AndMetricsPortMinusOneMeansNone() throws Exception {
        try (ArraydServer server = ArraydServer.start(ServerOptions.defaults().withPort(0).withCpuMemoryBytes(64L << 20))) {
            try (HttpClient http = HttpClient.newHttpClient()) {
                var r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.metricsPort() + "/nope"))
                        .build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(404, r.statusCode());
            }
        }
        try (ArraydServer server = ArraydServer.start(ServerOptions.defaults().withPort(0).withMetricsPort(-1)
                .withCpuMemoryBytes(64L << 20))) {
            assertEquals(-1, server.metricsPort());
        }
    }
}
