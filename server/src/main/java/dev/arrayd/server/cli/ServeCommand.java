package dev.arrayd.server.cli;

import dev.arrayd.server.ArraydServer;
import dev.arrayd.server.ServerOptions;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code arrayd serve}: runs the daemon until SIGTERM / SIGINT. */
@Command(name = "serve", mixinStandardHelpOptions = true, description = "Run the daemon (CPU device by default).")
final class ServeCommand implements Callable<Integer> {

    private static final Logger log = LoggerFactory.getLogger(ServeCommand.class);

    @Option(names = "--bind", description = "Address to listen on (default: ${DEFAULT-VALUE}).",
            defaultValue = ServerOptions.DEFAULT_BIND)
    String bind;

    @Option(names = "--port", description = "TCP port; 0 = any free port (default: ${DEFAULT-VALUE}).",
            defaultValue = "" + ServerOptions.DEFAULT_PORT)
    int port;

    @Option(names = "--target", description = "host:port to listen on; overrides --bind and --port.")
    String target;

    @Option(names = "--devices", description = "Devices to open: cpu (all cores), cpu:2 (two devices splitting the "
            + "cores) (default: ${DEFAULT-VALUE}).", defaultValue = ServerOptions.DEFAULT_DEVICES)
    String devices;

    @Option(names = "--allow-native-source", description = "Accept native kernel source (C, OpenCL C, CUDA C, PTX). "
            + "Off by default: a native kernel can do anything the daemon process can.")
    boolean allowNativeSource;

    @Option(names = "--insecure", description = "Allow listening on a non-loopback address without authentication.")
    boolean insecure;

    @Option(names = "--cpu-memory", description = "Memory of each CPU device in bytes; 0 = half the machine's RAM "
            + "split among CPU devices (default: ${DEFAULT-VALUE}).", defaultValue = "0")
    long cpuMemory;

    @Option(names = "--max-message-bytes", description = "Largest gRPC message accepted (default: ${DEFAULT-VALUE}).",
            defaultValue = "" + ServerOptions.DEFAULT_MAX_MESSAGE_BYTES)
    int maxMessageBytes;

    @Option(names = "--fast-path-micros", description = "Commands expected to finish within this many µs run "
            + "on the thread that made them ready instead of a stream worker, saving two thread hand-offs; "
            + "0 = off (default: ${DEFAULT-VALUE}).", defaultValue = "20")
    long fastPathMicros;

    @Option(names = "--port-file", description = "Write the bound port to this file once listening.")
    Path portFile;

    @Override
    public Integer call() throws Exception {
        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
        String host = bind;
        int p = port;
        if (target != null) {
            Target t = Target.parse(target);
            host = t.host();
            p = t.port();
        }
        ServerOptions options = new ServerOptions(host, p, devices, allowNativeSource, insecure,
                ServerOptions.DEFAULT_LEASE_MILLIS, maxMessageBytes, cpuMemory, portFile, fastPathMicros * 1000);
        if (fastPathMicros < 0) {
            System.err.println("arrayd serve: --fast-path-micros " + fastPathMicros + " (expected: >= 0)");
            return 2;
        }
        ArraydServer server;
        try {
            server = ArraydServer.start(options);
        } catch (IllegalArgumentException | IllegalStateException e) {
            System.err.println("arrayd serve: " + e.getMessage());
            return 2;
        }
        // SIGTERM / SIGINT: stop accepting, finish submitted work, release devices, exit 0.
        CountDownLatch stopped = new CountDownLatch(1);
        Runnable stop = () -> {
            log.info("shutting down");
            server.close();
            stopped.countDown();
        };
        for (String sig : new String[] {"TERM", "INT"}) {
            sun.misc.Signal.handle(new sun.misc.Signal(sig), s -> Thread.ofPlatform().name("arrayd-shutdown").start(stop));
        }
        System.out.println("arrayd listening on " + new Target(host, server.port()) + " (devices: "
                + server.scheduler().devices() + "); Ctrl-C to stop");
        System.out.flush();
        stopped.await();
        return 0;
    }
}
