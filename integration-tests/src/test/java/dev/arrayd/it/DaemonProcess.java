package dev.arrayd.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The daemon started from the built distribution ({@code cli/target/dist}) as a separate JVM,
 * on a free loopback port. Its output is collected; the port is read from its "listening" line.
 */
final class DaemonProcess implements AutoCloseable {

    private static final Pattern LISTENING = Pattern.compile("arrayd listening on (127\\.0\\.0\\.\\d+):(\\d+)");
    private static final Pattern METRICS = Pattern.compile("arrayd metrics on http://[0-9.]+:(\\d+)/metrics");

    final Process process;
    final int port;
    /** The loopback address it listens on (127.0.0.1 unless started with another {@code --bind}). */
    private volatile String host = "127.0.0.1";
    private final List<String> output = new ArrayList<>();
    private final Thread pump;
    private final CompletableFuture<Integer> portFound = new CompletableFuture<>();
    private final CompletableFuture<Integer> metricsPortFound = new CompletableFuture<>();

    DaemonProcess(String... extraArgs) throws Exception {
        this(java.util.Map.of(), extraArgs);
    }

    /** With these environment variables added to this JVM's. */
    DaemonProcess(java.util.Map<String, String> env, String... extraArgs) throws Exception {
        this(0, env, extraArgs);
    }

    /** On {@code listenPort} (0: any free one), with these environment variables added to this JVM's. */
    DaemonProcess(int listenPort, java.util.Map<String, String> env, String... extraArgs) throws Exception {
        List<String> cmd = new ArrayList<>(javaCommand("dev.arrayd.cli.Main"));
        cmd.addAll(List.of("serve", "--port", Integer.toString(listenPort)));
        cmd.addAll(List.of(extraArgs));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        process = pb.start();
        pump = Thread.ofPlatform().daemon().name("daemon-output").start(this::pump);
        try {
            port = portFound.get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            process.destroyForcibly();
            throw new AssertionError("daemon did not start; output:\n" + output(), e);
        }
    }

    /** {@code java -cp dist/lib/* main}, with the JVM running this test. */
    static List<String> javaCommand(String main) {
        Path dist = Path.of(System.getProperty("arrayd.dist", "../cli/target/dist"));
        assertTrue(Files.isDirectory(dist.resolve("lib")), "no distribution at " + dist.toAbsolutePath()
                + " (build the cli module first)");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp", dist.resolve("lib") + "/*", main);
    }

    /** The port of /metrics (printed right after the listening line). */
    int metricsPort() throws Exception {
        return metricsPortFound.get(10, TimeUnit.SECONDS);
    }

    String target() {
        return host + ":" + port;
    }

    private void pump() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                synchronized (output) {
                    output.add(line);
                }
                Matcher m = LISTENING.matcher(line);
                if (m.find()) {
                    host = m.group(1);
                    portFound.complete(Integer.parseInt(m.group(2)));
                }
                Matcher mm = METRICS.matcher(line);
                if (mm.find()) {
                    metricsPortFound.complete(Integer.parseInt(mm.group(1)));
                }
            }
        } catch (IOException e) {
            // process ended
        }
        portFound.completeExceptionally(new IllegalStateException("daemon output ended"));
        metricsPortFound.completeExceptionally(new IllegalStateException("daemon output ended"));
    }

    /** Lines the daemon has written so far. */
    long outputLines() {
        synchronized (output) {
            return output.size();
        }
    }

    /** Its last {@code n} lines. */
    String lastLines(int n) {
        synchronized (output) {
            return String.join("\n", output.subList(Math.max(0, output.size() - n), output.size()));
        }
    }

    String output() {
        synchronized (output) {
            return String.join("\n", output);
        }
    }

    /** The whole output once the process has exited (waits for the output pump). */
    String terminateOutput() throws InterruptedException {
        pump.join(TimeUnit.SECONDS.toMillis(10));
        return output();
    }

    /** Sends SIGTERM and returns the exit code. */
    int terminate() throws InterruptedException {
        process.toHandle().destroy(); // Process.destroy() would also close our end of its output
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("daemon did not exit within 30 s of SIGTERM; output:\n" + output());
        }
        pump.join(TimeUnit.SECONDS.toMillis(10)); // the rest of its output
        return process.exitValue();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            terminate();
        }
    }
}
