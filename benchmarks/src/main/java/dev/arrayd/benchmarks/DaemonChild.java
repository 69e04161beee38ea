package dev.arrayd.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A daemon started as a child process from this JVM's own classpath (the benchmark distribution
 * holds the server and every dependency), the way clients meet arrayd in real use: in another
 * process. Stopped with SIGTERM.
 */
final class DaemonChild implements AutoCloseable {

    private static final Pattern LISTENING = Pattern.compile("arrayd listening on 127\\.0\\.0\\.1:(\\d+)");

    private final Process process;
    private final int port;
    private final StringBuilder output = new StringBuilder();

    DaemonChild(List<String> serveArgs) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"),
                "dev.arrayd.cli.Main", "serve", "--port", "0"));
        cmd.addAll(serveArgs);
        process = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        CompletableFuture<Integer> found = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("bench-daemon-output").start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    synchronized (output) {
                        output.append(line).append('\n');
                    }
                    Matcher m = LISTENING.matcher(line);
                    if (m.find()) {
                        found.complete(Integer.parseInt(m.group(1)));
                    }
                }
            } catch (IOException e) {
                // the daemon ended
            }
            found.completeExceptionally(new IOException("the daemon exited before listening"));
        });
        try {
            port = found.get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            process.destroyForcibly();
            throw new IOException("could not start the daemon (" + e.getMessage() + "); its output:\n" + output(), e);
        }
    }

    int port() {
        return port;
    }

    long pid() {
        return process.pid();
    }

    String output() {
        synchronized (output) {
            return output.toString();
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.toHandle().destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
