package dev.arrayd.cli;

import dev.arrayd.server.ArraydServer;
import dev.arrayd.server.ServerOptions;
import dev.arrayd.server.config.ArraydConfig;
import dev.arrayd.server.config.ConfigException;
import dev.arrayd.server.config.ConfigSource;
import dev.arrayd.server.config.ConfigValue;
import dev.arrayd.server.config.ResolvedConfig;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code arrayd serve}: runs the daemon until SIGTERM / SIGINT, then shuts down gracefully (see
 * {@link ArraydServer#close()}) and exits 0. Its flags are generated from
 * {@link ArraydConfig#ALL} ({@link ConfigFlags}); a bad setting exits 2 with a message naming it.
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Run the daemon (CPU device by default). Every flag is also an ARRAYD_* environment variable "
                + "and a config file key; see docs/configuration.md or `arrayd config --print`.")
final class ServeCommand implements Callable<Integer> {

    private static final Logger log = LoggerFactory.getLogger(ServeCommand.class);

    @Spec
    CommandSpec spec;

    /** Netty's system property for its buffer leak detector, as gRPC's shaded copy of Netty reads it. */
    static final String LEAK_DETECTION_PROPERTY = "io.grpc.netty.shaded.io.netty.leakDetection.level";

    /**
     * Turns off Netty's buffer leak detector unless its level was set with {@code -D}: by default it
     * samples one buffer in 128 and records a stack trace for each, on the transport threads; under a
     * flood of small messages that was about 300 stack walks a second in the daemon, each in some
     * client's round trip. The tests keep it (their servers start without this command).
     */
    static void disableBufferLeakSampling() {
        if (System.getProperty(LEAK_DETECTION_PROPERTY) == null && System.getProperty("io.netty.leakDetection.level") == null) {
            io.grpc.netty.shaded.io.netty.util.ResourceLeakDetector.setLevel(
                    io.grpc.netty.shaded.io.netty.util.ResourceLeakDetector.Level.DISABLED);
        }
    }

    @Override
    public Integer call() throws Exception {
        ResolvedConfig cfg;
        ServerOptions options;
        try {
            cfg = ConfigFlags.resolve(spec, System.getenv());
            options = options(cfg);
        } catch (ConfigException | IllegalArgumentException e) {
            System.err.println("arrayd serve: " + e.getMessage());
            return 2;
        }
        LogSetup.apply(cfg.get(ArraydConfig.LOG_FORMAT), cfg.get(ArraydConfig.LOG_LEVEL));
        String set = cfg.all().stream().filter(v -> v.source() != ConfigSource.DEFAULT)
                .map(v -> v.key().name() + "=" + v.text() + " (" + v.origin() + ")").collect(Collectors.joining(", "));
        log.info("configuration: {}", set.isEmpty() ? "all defaults" : set + "; the rest default");
        disableBufferLeakSampling();
        ArraydServer server;
        try {
            server = ArraydServer.start(options, security(cfg));
        } catch (IllegalArgumentException | IllegalStateException e) {
            System.err.println("arrayd serve: " + e.getMessage());
            return 2;
        } catch (java.io.IOException e) {
            System.err.println("arrayd serve: " + listenFailure(options, e));
            return 2;
        }
        // SIGTERM / SIGINT: graceful shutdown (NOT_SERVING, refuse new work, drain, release), exit 0.
        CountDownLatch stopped = new CountDownLatch(1);
        Runnable stop = () -> {
            server.close();
            stopped.countDown();
        };
        for (String sig : new String[] {"TERM", "INT"}) {
            sun.misc.Signal.handle(new sun.misc.Signal(sig), s -> {
                if (stopped.getCount() > 0) {
                    Thread.ofPlatform().name("arrayd-shutdown").start(stop);
                }
            });
        }
        System.out.println("arrayd listening on " + new Target(options.bind(), server.port()) + " (devices: "
                + server.scheduler().devices() + "); Ctrl-C to stop");
        if (server.unixSocket() != null) {
            System.out.println("arrayd listening on unix://" + server.unixSocket());
        }
        if (server.metricsPort() >= 0) {
            System.out.println("arrayd metrics on http://" + new Target(options.metricsAddress(), server.metricsPort())
                    + "/metrics");
        }
        System.out.flush();
        stopped.await();
        return 0;
    }

    /**
     * One line for a gRPC port that cannot be listened on (in use, or not allowed), naming it, the system's reason
     * (the innermost cause: "Address already in use") and what to do.
     */
    static String listenFailure(ServerOptions options, Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String why = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
        return "cannot listen on " + new Target(options.bind(), options.port()) + ": " + why
                + " (expected: a free port; choose another with --port, or 0 for any free port)";
    }

    /** Authentication, TLS, quotas and per-session bounds of a resolved configuration. */
    static dev.arrayd.server.SecurityOptions security(ResolvedConfig cfg) {
        return new dev.arrayd.server.SecurityOptions(cfg.get(ArraydConfig.AUTH_TOKENS), cfg.get(ArraydConfig.TLS_CERT),
                cfg.get(ArraydConfig.TLS_KEY), cfg.get(ArraydConfig.TLS_CLIENT_CA), cfg.get(ArraydConfig.TENANT_QUOTAS),
                cfg.get(ArraydConfig.SESSION_MAX_INFLIGHT));
    }

    /** The server options of a resolved configuration ({@code target}, when set, overrides bind and port). */
    static ServerOptions options(ResolvedConfig cfg) {
        String host = cfg.get(ArraydConfig.BIND);
        int port = cfg.get(ArraydConfig.PORT);
        ConfigValue<?> metricsPort = cfg.value(ArraydConfig.METRICS_PORT);
        int metrics = cfg.get(ArraydConfig.METRICS_PORT);
        String target = cfg.get(ArraydConfig.TARGET);
        if (!target.isEmpty()) {
            Target t = Target.parseListen(target);
            host = t.host();
            port = t.port();
            if (metricsPort.source() == ConfigSource.DEFAULT) {
                metrics = port == 0 ? 0 : ServerOptions.DEFAULT_METRICS_PORT;
            }
        }
        return new ServerOptions(host, port, cfg.get(ArraydConfig.DEVICES), cfg.get(ArraydConfig.ALLOW_NATIVE_SOURCE),
                cfg.get(ArraydConfig.INSECURE), cfg.get(ArraydConfig.SESSION_LEASE).toMillis(),
                Math.toIntExact(cfg.get(ArraydConfig.MAX_MESSAGE_BYTES)), cfg.get(ArraydConfig.CPU_MEMORY),
                cfg.get(ArraydConfig.PORT_FILE), cfg.get(ArraydConfig.FAST_PATH_MICROS) * 1000, metrics,
                cfg.get(ArraydConfig.METRICS_CLIENT_LIMIT), cfg.get(ArraydConfig.SHUTDOWN_GRACE).toMillis(),
                cfg.get(ArraydConfig.CACHE_DIR), cfg.get(ArraydConfig.COMPILE_CACHE_MAX_BYTES), cfg.get(ArraydConfig.CPU_THREADS), cfg.get(ArraydConfig.CPU_NICE),
                cfg.get(ArraydConfig.CPU_VECTOR_BITS), cfg.get(ArraydConfig.CPU_LANES), cfg.get(ArraydConfig.JIT_NICE), cfg.get(ArraydConfig.METRICS_BIND),
                cfg.get(ArraydConfig.METRICS_KERNEL_LIMIT), cfg.get(ArraydConfig.TRACING),
                cfg.get(ArraydConfig.UDS), cfg.get(ArraydConfig.REGION_MEMORY), cfg.get(ArraydConfig.PEERS),
                cfg.get(ArraydConfig.PEER_TOKEN_FILE), cfg.get(ArraydConfig.PEER_TLS_CA), cfg.get(ArraydConfig.PEER_BULK_PORT),
                cfg.get(ArraydConfig.TRANSFER_MEMORY));
    }
}
