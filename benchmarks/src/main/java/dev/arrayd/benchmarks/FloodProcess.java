package dev.arrayd.benchmarks;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A {@link FloodClient} child process (same JVM and class path as the benchmark), switched on and off. */
final class FloodProcess implements AutoCloseable {

    private final Process process;
    private final BufferedReader out;
    private final BufferedWriter in;
    private volatile long jitMillis;

    FloodProcess(String host, int port, String device, int streams, int spin, int window) throws IOException {
        process = new ProcessBuilder(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"),
                FloodClient.class.getName(), host, String.valueOf(port), device, String.valueOf(streams),
                String.valueOf(spin), String.valueOf(window)))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        in = new BufferedWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8));
        expect("ready");
    }

    /** Starts flooding; returns once the child has started its threads. */
    void on() throws IOException {
        send("on");
        expect("flooding");
    }

    /** Stops flooding; returns once every launch the child sent was answered, with how many it sent. */
    long off() throws IOException {
        send("off");
        String[] words = expect("stopped ").strip().split(" ");
        jitMillis = Long.parseLong(words[2]);
        return Long.parseLong(words[1]);
    }

    /** The child's JIT cost in ms as of the last {@link #off()} (see {@link JitWarmUp#ownJitMillis()}). */
    long jitMillis() {
        return jitMillis;
    }

    private void send(String word) throws IOException {
        in.write(word);
        in.newLine();
        in.flush();
    }

    private String expect(String prefix) throws IOException {
        String line = out.readLine();
        if (line == null || !line.startsWith(prefix)) {
            throw new IOException("flooding client: expected \"" + prefix + "...\", got " + (line == null
                    ? "end of output (exit " + exitCode() + ")" : "\"" + line + "\""));
        }
        return line;
    }

    private String exitCode() {
        try {
            return process.waitFor(5, TimeUnit.SECONDS) ? String.valueOf(process.exitValue()) : "still running";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    /** Closes its input (it stops and exits), and ends it if it has not within 30 s. */
    @Override
    public void close() throws IOException {
        try {
            in.close();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
