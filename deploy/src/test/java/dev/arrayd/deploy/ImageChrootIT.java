package dev.arrayd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.arrayd.cli.Main;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Runs the image without Docker, the way a container runtime would: its layers unpacked into a root
 * directory, mounted read-only in a private mount namespace with a tmpfs on /tmp (the pod's emptyDir),
 * /proc and /dev, then its Entrypoint + Cmd with its Env, as its User, under chroot. Then: health
 * SERVING, /metrics answers, `arrayd demo` compiles a C kernel with the image's gcc and runs it, the
 * process is uid 65532, and SIGTERM ends it with exit 0.
 *
 * <p>Needs root, unshare and chroot (the build machines have them); elsewhere it is skipped with the
 * reason, and ImageContainerIT does the same with Docker.
 */
class ImageChrootIT {

    @Test
    void imageRunsReadOnlyAsNonRootAndCompilesKernels() throws Exception {
        assumeTrue(System.getProperty("os.name").equals("Linux"), "Linux only");
        assumeTrue(uid(ProcessHandle.current().pid()) == 0, "needs root (mount namespace, chroot)");
        for (String tool : List.of("unshare", "chroot", "tar", "mount", "env")) {
            assumeTrue(which(tool) != null, tool + " not on PATH");
        }
        assumeTrue(new ProcessBuilder("unshare", "-m", "true").start().waitFor() == 0, "unshare -m not permitted here");

        OciImage image = OciImage.load();
        Path root = image.tar.resolveSibling("arrayd-image-rootfs");
        OciImage.deleteTree(root);
        Files.createDirectories(root);
        for (Path layer : image.layers) {
            Process tar = new ProcessBuilder("tar", "-xzf", layer.toString(), "-C", root.toString())
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            assertEquals(0, tar.waitFor(), "tar -x " + layer);
        }
        for (String dir : List.of("proc", "dev", "tmp")) {
            Files.createDirectories(root.resolve(dir));
        }

        JsonNode config = image.config.path("config");
        int port = freePort();
        int metricsPort = freePort();
        List<String> command = new ArrayList<>(List.of("unshare", "-m", "--fork", "sh", "-c",
                "set -e; R=$1; shift; mount --bind \"$R\" \"$R\"; mount -o remount,bind,ro \"$R\"; "
                        + "mount -t tmpfs -o mode=1777 tmpfs \"$R/tmp\"; mount -t proc proc \"$R/proc\"; "
                        + "mount --rbind /dev \"$R/dev\"; cd /; exec \"$@\"",
                "sh", root.toString(), which("env"), "-i"));
        ImageTarIT.strings(config.path("Env")).forEach(command::add);
        command.addAll(List.of("ARRAYD_PORT=" + port, "ARRAYD_METRICS_PORT=" + metricsPort,
                "ARRAYD_ALLOW_NATIVE_SOURCE=true", "ARRAYD_CPU_MEMORY=256MiB", "ARRAYD_SHUTDOWN_GRACE=5s"));
        command.addAll(List.of(which("chroot"), "--userspec=" + config.path("User").asText(), root.toString()));
        command.addAll(ImageTarIT.strings(config.path("Entrypoint")));
        command.addAll(ImageTarIT.strings(config.path("Cmd")));

        Process process = new ProcessBuilder(command).start();
        ConcurrentLinkedQueue<String> stderr = new ConcurrentLinkedQueue<>();
        Thread.ofVirtual().start(() -> lines(process.getErrorStream(), stderr, null));
        CompletableFuture<Void> listening = new CompletableFuture<>();
        ConcurrentLinkedQueue<String> stdout = new ConcurrentLinkedQueue<>();
        Thread.ofVirtual().start(() -> lines(process.getInputStream(), stdout, listening));
        try {
            try {
                listening.get(90, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError("the image's daemon did not start: stdout " + stdout + "\nstderr " + stderr, e);
            }
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
            try {
                assertEquals(ServingStatus.SERVING, HealthGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                        .check(HealthCheckRequest.newBuilder().setService("arrayd.device.cpu:0").build()).getStatus());
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            try (HttpClient http = HttpClient.newHttpClient()) {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode());
                assertTrue(r.body().contains("arrayd_build_info"), "arrayd's metrics");
            }
            // a C kernel compiled by the image's gcc, in /tmp, on a read-only root filesystem
            assertEquals(0, Main.run("demo", "--target", "127.0.0.1:" + port), "arrayd demo against the image's daemon");

            ProcessHandle java = javaOf(process);
            assertEquals(65532, uid(java.pid()), "the daemon runs as the image's user");
            Path kernels = Path.of("/proc", Long.toString(java.pid()), "root/tmp/cache/arrayd/kernels");
            try (Stream<Path> files = Files.list(kernels)) {
                assertTrue(files.findAny().isPresent(), "the kernel cache is written under /tmp");
            }
            assertTrue(java.destroy(), "SIGTERM");
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "exits within the grace period");
            assertEquals(0, process.exitValue(), "exit status after SIGTERM; stderr " + stderr);
            assertTrue(String.join("\n", stderr).contains("arrayd stopped"), "graceful shutdown logged: " + stderr);
        } finally {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static void lines(java.io.InputStream in, ConcurrentLinkedQueue<String> out, CompletableFuture<Void> metricsLine) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                out.add(line);
                if (metricsLine != null && line.startsWith("arrayd metrics on ")) {
                    metricsLine.complete(null);
                }
            }
        } catch (IOException e) {
            // the process ended
        }
        if (metricsLine != null) {
            metricsLine.completeExceptionally(new IllegalStateException("stdout ended"));
        }
    }

    private static ProcessHandle javaOf(Process process) {
        return process.descendants().filter(h -> h.info().command().map(c -> c.endsWith("/java")).orElse(false))
                .findFirst().orElseThrow(() -> new AssertionError("no java process under " + process.pid()));
    }

    /** The real uid of a process (/proc/PID/status). */
    static long uid(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("Uid:")) {
                return Long.parseLong(line.split("\\s+")[1]);
            }
        }
        throw new IOException("no Uid line for " + pid);
    }

    static String which(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path p = Path.of(dir, tool);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        for (String dir : List.of("/usr/sbin", "/sbin")) {
            Path p = Path.of(dir, tool);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return null;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

}
