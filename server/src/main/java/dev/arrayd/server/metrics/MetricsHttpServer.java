package dev.arrayd.server.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * {@code GET /metrics} on the JDK's built-in HTTP server: Prometheus text format 0.0.4, or OpenMetrics
 * 1.0 when the {@code Accept} header asks for {@code application/openmetrics-text} (what Prometheus
 * sends by default). One thread of its own, so a scrape never touches a gRPC transport thread.
 */
public final class MetricsHttpServer implements AutoCloseable {

    static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";
    static final String OPENMETRICS_TEXT = "application/openmetrics-text; version=1.0.0; charset=utf-8";

    private final HttpServer server;
    private final ExecutorService executor;
    private final PrometheusMeterRegistry registry;

    public MetricsHttpServer(InetSocketAddress address, PrometheusMeterRegistry registry) throws IOException {
        this.registry = registry;
        this.server = HttpServer.create(address, 16);
        this.executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "arrayd-metrics-http");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/", this::handle);
        server.start();
    }

    /** The bound port (useful with port 0). */
    public int port() {
        return server.getAddress().getPort();
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            String path = ex.getRequestURI().getPath();
            boolean head = ex.getRequestMethod().equals("HEAD");
            if (!head && !ex.getRequestMethod().equals("GET")) {
                ex.getResponseHeaders().set("Allow", "GET, HEAD");
                reply(ex, 405, "text/plain; charset=utf-8", "method not allowed\n".getBytes(StandardCharsets.UTF_8), false);
                return;
            }
            if (path.equals("/metrics")) {
                String accept = ex.getRequestHeaders().getFirst("Accept");
                String type = accept != null && accept.contains("application/openmetrics-text")
                        ? OPENMETRICS_TEXT : PROMETHEUS_TEXT;
                ByteArrayOutputStream body = new ByteArrayOutputStream(64 << 10);
                registry.scrape(body, type);
                reply(ex, 200, type, body.toByteArray(), head);
            } else if (path.equals("/")) {
                reply(ex, 200, "text/plain; charset=utf-8",
                        "arrayd: metrics at /metrics; health over gRPC (grpc.health.v1)\n".getBytes(StandardCharsets.UTF_8),
                        head);
            } else {
                reply(ex, 404, "text/plain; charset=utf-8", "not found (metrics are at /metrics)\n"
                        .getBytes(StandardCharsets.UTF_8), head);
            }
        }
    }

    private static void reply(HttpExchange ex, int status, String type, byte[] body, boolean head) throws IOException {
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(status, head ? -1 : body.length);
        if (!head) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
