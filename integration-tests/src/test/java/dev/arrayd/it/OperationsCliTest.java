package dev.arrayd.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.DType;
import dev.arrayd.client.Session;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The operator's tools against a real daemon: health, stats, config, /metrics, JSON logs, bad settings. */
class OperationsCliTest {

    @Test
    void healthStatsAndMetricsOfARunningDaemon() throws Exception {
        try (DaemonProcess d = new DaemonProcess("--devices", "cpu:2", "--log-format", "json", "--log-level", "debug");
                ArraydClient c = ArraydClient.connect(d.target());
                Session s = c.openSession("ops-it").get(60, TimeUnit.SECONDS)) {
            s.createBuffer(DType.F32, 1024).get(60, TimeUnit.SECONDS);
            s.fill(s.createBuffer(DType.F32, 16).get(60, TimeUnit.SECONDS), 1f).future().get(60, TimeUnit.SECONDS);

            DaemonProcessTest.CliRun health = DaemonProcessTest.cli("health", "--target", d.target());
            assertEquals(0, health.exit(), health.output());
            assertTrue(health.output().matches("(?s).*arrayd\\.device\\.cpu:0\\s+SERVING.*"), health.output());
            assertTrue(health.output().matches("(?s).*arrayd\\.device\\.cpu:1\\s+SERVING.*"), health.output());

            DaemonProcessTest.CliRun stats = DaemonProcessTest.cli("stats", "--once", "--target", d.target());
            assertEquals(0, stats.exit(), stats.output());
            assertTrue(stats.output().contains("sessions 1"), stats.output());
            assertTrue(stats.output().matches("(?s).*\\ncpu:0 .*\\ncpu:1 .*"), stats.output());
            assertTrue(stats.output().matches("(?s).*\\nops-it\\s+1\\s+\\d+\\s+0\\n.*"), stats.output());

            String metrics;
            try (HttpClient http = HttpClient.newHttpClient()) {
                metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + d.metricsPort() + "/metrics"))
                        .build(), HttpResponse.BodyHandlers.ofString()).body();
            }
            assertTrue(metrics.contains("arrayd_client_sessions{client=\"ops-it\"} 1.0"), metrics);
            assertTrue(metrics.contains("arrayd_device_memory_used_bytes{device=\"cpu:1\"}"), metrics);
            // the version of the jars, not a placeholder
            String version = System.getProperty("arrayd.version");
            assertTrue(version != null && metrics.contains("arrayd_build_info{version=\"" + version + "\"}"), metrics);

            // JSON log lines, and a call's lines carry its request id
            assertTrue(d.output().lines().anyMatch(l -> l.matches("\\{\"timestamp\":\"\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d"
                    + "\\.\\d{3}Z\",\"level\":\"INFO\",\"message\":\"arrayd listening on .*\\}")), d.output());
            assertTrue(d.output().lines().anyMatch(l -> l.startsWith("{") && l.contains("\"request_id\"")
                    && l.contains("OpenSession")), d.output());
        }
        DaemonProcessTest.CliRun down = DaemonProcessTest.cli("health", "--target", "127.0.0.1:1");
        assertEquals(1, down.exit(), down.output());
    }

    @Test
    void metricsListenOnTheirOwnAddressWhenMetricsBindIsSet() throws Exception {
        // 127.0.0.2 is loopback on Linux, but another address than gRPC's 127.0.0.1
        try (DaemonProcess d = new DaemonProcess("--metrics-bind", "127.0.0.2", "--metrics-port", "0");
                HttpClient http = HttpClient.newHttpClient()) {
            var ok = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.2:" + d.metricsPort() + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, ok.statusCode());
            assertTrue(ok.body().contains("arrayd_build_info"), ok.body());
            assertTrue(d.output().contains("arrayd metrics on http://127.0.0.2:" + d.metricsPort() + "/metrics"), d.output());
            var refused = org.junit.jupiter.api.Assertions.assertThrows(java.io.IOException.class, () -> http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + d.metricsPort() + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()));
            assertTrue(refused instanceof java.net.ConnectException, refused.toString());
            // gRPC stays on 127.0.0.1
            DaemonProcessTest.CliRun health = DaemonProcessTest.cli("health", "--target", d.target());
            assertEquals(0, health.exit(), health.output());
        }
    }

    @Test
    void configPrintShowsEachValueAndItsSource() throws Exception {
        CliRun r = run(Map.of("ARRAYD_METRICS_PORT", "9102", "ARRAYD_SHUTDOWN_GRACE", "7s"),
                "config", "--print", "--shutdown-grace", "9s");
        assertEquals(0, r.exit(), r.output());
        assertTrue(r.output().matches("(?s).*\\nmetrics-port\\s+9102\\s+environment ARRAYD_METRICS_PORT\\n.*"), r.output());
        assertTrue(r.output().matches("(?s).*\\nshutdown-grace\\s+9s\\s+flag --shutdown-grace\\n.*"), r.output());
        assertTrue(r.output().matches("(?s).*\\nport\\s+7700\\s+default\\n.*"), r.output());
    }

    @Test
    void anInvalidSettingStopsServeWithExitTwoNamingIt() throws Exception {
        CliRun r = run(Map.of("ARRAYD_METRICS_PORT", "abc"), "serve", "--port", "0");
        assertEquals(2, r.exit(), r.output());
        assertTrue(r.output().contains("metrics-port: \"abc\" (from environment ARRAYD_METRICS_PORT; not an integer; "
                + "expected: an integer in -1..65535)"), r.output());
    }

    record CliRun(int exit, String output) {}

    static CliRun run(Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(DaemonProcess.javaCommand("dev.arrayd.cli.Main"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        p.getInputStream().transferTo(out);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("did not finish: " + String.join(" ", args));
        }
        return new CliRun(p.exitValue(), out.toString());
    }
}
