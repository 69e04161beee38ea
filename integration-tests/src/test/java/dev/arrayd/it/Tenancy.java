package dev.arrayd.it;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Helpers of the multi-tenant tests: metrics, client processes, bounded polling. */
final class Tenancy {

    private Tenancy() {}

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    /** Sum of every series of a metric family on the daemon's /metrics. */
    static double metric(int metricsPort, String family) throws Exception {
        String body = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        double sum = 0;
        for (String line : body.split("\n")) {
            if (line.startsWith(family + " ") || line.startsWith(family + "{")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    static double heapBytes(int metricsPort) throws Exception {
        String body = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        double sum = 0;
        for (String line : body.split("\n")) {
            if (line.startsWith("jvm_memory_used_bytes{") && line.contains("area=\"heap\"")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /** Polls {@code condition} (every 10 ms) until it holds or {@code within} passes; returns whether it held. */
    static boolean await(Duration within, BooleanSupplier condition) {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        return true;
    }

    interface Check {
        boolean test() throws Exception;
    }

    static BooleanSupplier quietly(Check c) {
        return () -> {
            try {
                return c.test();
            } catch (Exception e) {
                return false;
            }
        };
    }

    /** A {@link GraphClientMain} process; returns once it printed READY. */
    static Process graphClient(String target, long leaseMillis) throws Exception {
        Path dist = Path.of(System.getProperty("arrayd.dist", "../server/target/dist"));
        String cp = Path.of("target", "test-classes").toAbsolutePath() + ":" + dist.resolve("lib") + "/*";
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-cp", cp, GraphClientMain.class.getName(), target,
                Long.toString(leaseMillis)).redirectErrorStream(true).start();
        CompletableFuture<String> ready = new CompletableFuture<>();
        List<String> out = new ArrayList<>();
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    synchronized (out) {
                        out.add(line);
                    }
                    if (line.startsWith("READY")) {
                        ready.complete(line);
                    }
                }
            } catch (Exception e) {
                // process gone
            }
            ready.completeExceptionally(new IllegalStateException("client exited: " + out));
        });
        ready.get(60, TimeUnit.SECONDS);
        return p;
    }

    static void signal(Process p, String sig) throws Exception {
        Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(p.pid())).inheritIO().start();
        if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
            throw new AssertionError("kill -" + sig + " " + p.pid() + " failed");
        }
    }
}
