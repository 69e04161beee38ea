package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.scheduler.SchedulerConfig;
import dev.arrayd.server.metrics.ArraydMetrics;
import dev.arrayd.server.metrics.GrpcMetricsInterceptor;
import dev.arrayd.server.metrics.MetricsHttpServer;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The daemon: devices, scheduler and the gRPC server over them.
 *
 * <p>Handlers run on the transport threads ({@code directExecutor()}): every thread hop costs tens
 * of microseconds, and none of them blocks. Compilation, the one slow operation, runs on its own
 * executor.
 *
 * <p>Shutdown ({@link #close()}), the contract docs/operations.md states: health NOT_SERVING at
 * once; new sessions and commands refused with UNAVAILABLE; accepted work drains for up to the grace
 * period; what remains is failed with UNAVAILABLE; sessions close (their streams end), the gRPC and
 * metrics servers stop, devices and pools are released.
 */
public final class ArraydServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ArraydServer.class);

    private final ServerOptions options;
    private final Backends backends;
    private final Scheduler scheduler;
    private final ExecutorService compileExecutor;
    private final CompletionLinger completionLinger = new CompletionLinger();
    /** Reused only on Netty, which copies a message's bytes as it is sent (see {@link DownloadArrays}). */
    private final DownloadArrays downloadArrays;
    private final TransferMemory transferMemory;
    private final Server server;
    private final ArraydMetrics metrics;
    private final dev.arrayd.server.tracing.Tracing tracing;
    private final DaemonHealth health = new DaemonHealth();
    private final MetricsHttpServer metricsHttp;
    private final UnixSocketListener unixSocket; // null without --uds
    private final dev.arrayd.server.regions.RegionBroker regions; // null without --uds
    private final AtomicBoolean closing = new AtomicBoolean();

    private final SessionRegistry sessions;
    private final BulkPort bulkPort; // null: none (peer-bulk-port -1, or TLS)
    private final java.util.concurrent.ScheduledExecutorService reaper;

    ArraydServer(ServerOptions options, java.util.function.Function<InetSocketAddress, ServerBuilder<?>> transport)
            throws IOException {
        this(options, SecurityOptions.NONE, Clock.SYSTEM, transport);
    }

    /**
     * @param security  authentication, TLS, quotas and per-session bounds
     * @param clock     time of leases, token reloads and quota windows (tests pass a fake one)
     * @param transport builds the transport for the bound address; null = Netty on TCP. Tests pass an
     *                  in-process transport.
     */
    ArraydServer(ServerOptions options, SecurityOptions security, Clock clock,
            java.util.function.Function<InetSocketAddress, ServerBuilder<?>> transport) throws IOException {
        this.options = options;
        InetAddress bindAddress = resolve(options.bind());
        if (!bindAddress.isLoopbackAddress() && !options.insecure() && !security.authenticates()) {
            throw new IllegalArgumentException("--bind " + options.bind() + ": refusing to listen beyond loopback without "
                    + "authentication; arrayd has no authentication configured, so anyone who can reach the port could "
                    + "use the devices (configure --auth-tokens FILE or --tls-client-ca FILE, or pass --insecure to do "
                    + "it anyway)");
        }
        if (!bindAddress.isLoopbackAddress() && security.authTokens() != null && security.tlsCert() == null) {
            log.warn("--bind {}: bearer tokens travel in plaintext beyond loopback; configure --tls-cert and --tls-key",
                    options.bind());
        }
        // fail before opening devices: a daemon must not start with credentials it cannot read
        dev.arrayd.server.auth.TokenStore tokens;
        try {
            tokens = security.authTokens() == null ? null
                    : new dev.arrayd.server.auth.TokenStore(security.authTokens(), security.tenantQuotas(), clock);
        } catch (IOException e) {
            throw new IllegalArgumentException("auth-tokens: cannot read " + security.authTokens() + " (" + e + ")", e);
        }
        var auth = new dev.arrayd.server.auth.AuthInterceptor(tokens, security.tlsClientCa() != null,
                security.tenantQuotas());
        this.backends = new Backends(DeviceRequest.parseList(options.devices()), options, security);
        SchedulerConfig config = SchedulerConfig.defaults().withAllowNativeSource(options.allowNativeSource())
                .withFastPathNanos(options.fastPathNanos());
        this.metrics = new ArraydMetrics(backends.devices().stream().map(d -> d.id().toString()).toList(),
                options.metricsClientLimit(), options.metricsKernelLimit(), version());
        metrics.registerBackends(backends.compilers().keySet());
        Scheduler sch = null;
        try {
            tracing = options.tracing() ? dev.arrayd.server.tracing.Tracing.fromEnvironment(version())
                    : dev.arrayd.server.tracing.Tracing.off();
            sch = new Scheduler(config, backends.devices(), backends.compilers(), System::nanoTime,
                    dev.arrayd.server.tracing.TracingObserver.wrap(metrics, tracing));
        } catch (RuntimeException e) {
            backends.close();
            metrics.close();
            throw e;
        }
        this.scheduler = sch;
        metrics.bindScheduler(scheduler);
        AtomicInteger n = new AtomicInteger();
        this.compileExecutor = Executors.newFixedThreadPool(Math.max(1, Runtime.getRuntime().availableProcessors()), r -> {
            Thread t = new Thread(r, "arrayd-compile-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        InetSocketAddress address = new InetSocketAddress(bindAddress, options.port());
        this.downloadArrays = transport == null ? DownloadArrays.reused() : DownloadArrays.fresh();
        this.transferMemory = new TransferMemory(options.transferMemoryBytes());
        ServerBuilder<?> builder;
        if (transport != null) {
            builder = transport.apply(address);
        } else {
            builder = NettyServerBuilder.forAddress(address, ComposingTransport.credentials(
                            security.tlsCert() != null ? TlsContexts.server(security) : null))
                    .permitKeepAliveTime(10, TimeUnit.SECONDS)
                    .permitKeepAliveWithoutCalls(true);
        }
        dev.arrayd.server.regions.RegionBroker regions = null;
        if (options.uds() != null) {
            // shared-memory regions: their descriptors are claimed on a socket beside the gRPC one
            try {
                // first: another daemon live on this path keeps its sockets (both), and this one stops here
                UnixSocketListener.clearStale(options.uds().toAbsolutePath());
                regions = dev.arrayd.server.regions.RegionBroker.start(
                        options.uds().resolveSibling(options.uds().getFileName() + ".regions"), options.regionMemoryBytes(),
                        backends::lockHostMemory);
            } catch (IOException | RuntimeException e) {
                closeScheduler();
                throw e instanceof IllegalArgumentException iae ? iae : new IllegalArgumentException("--uds "
                        + options.uds() + ": the regions' socket: " + e.getMessage(), e);
            }
        }
        this.regions = regions;
        this.sessions = new SessionRegistry(scheduler, clock, metrics.registry(), regions);
        BulkPort bulk = null;
        if (options.peerBulkPort() >= 0 && security.tlsCert() == null) {
            try {
                bulk = BulkPort.open(bindAddress, options.peerBulkPort(), scheduler, sessions, metrics.registry());
            } catch (RuntimeException e) {
                closeScheduler();
                throw new IllegalStateException(e.getMessage() + " (" + e.getCause() + "; choose another port with "
                        + "--peer-bulk-port, or -1 for none)", e);
            }
        }
        this.bulkPort = bulk;
        java.util.function.Function<ServerBuilder<?>, Server> assemble = b -> assemble(b, auth, security);
        this.server = assemble.apply(builder);
        try {
            server.start();
        } catch (IOException | RuntimeException e) {
            closeScheduler();
            throw e;
        }
        UnixSocketListener unix = null;
        if (options.uds() != null) {
            try {
                unix = UnixSocketListener.start(options.uds(), assemble);
            } catch (IOException | RuntimeException e) {
                server.shutdownNow();
                closeScheduler();
                throw e;
            }
        }
        this.unixSocket = unix;
        MetricsHttpServer http = null;
        if (options.metricsPort() >= 0) {
            try {
                InetAddress metricsAddress = options.metricsBind().isEmpty() ? bindAddress : resolve(options.metricsBind(), "--metrics-bind");
                http = new MetricsHttpServer(new InetSocketAddress(metricsAddress, options.metricsPort()), metrics.registry());
            } catch (IOException e) {
                server.shutdownNow();
                if (unix != null) {
                    unix.close();
                }
                closeScheduler();
                throw new IllegalStateException("metrics-port " + options.metricsPort() + ": cannot listen on "
                        + options.metricsAddress() + ":" + options.metricsPort() + " (" + e.getMessage() + "; choose another port "
                        + "with --metrics-port, or -1 for no metrics endpoint)", e);
            }
        }
        this.metricsHttp = http;
        health.serving(scheduler.devices());
        // a peer that comes up later (unreachable at the start, or a new member of a dns:/// set) adds its devices
        backends.onDevicesAdded(added -> {
            for (dev.arrayd.scheduler.DeviceRuntime d : scheduler.addDevices(added)) {
                health.device(d);
            }
        });
        log.info("arrayd listening on {}:{} with devices {}{}", options.bind(), port(),
                scheduler.devices(), options.allowNativeSource() ? " (native kernel source allowed)" : "");
        if (unixSocket != null) {
            log.info("arrayd listening on unix://{}", unixSocket.path());
        }
        if (metricsHttp != null) {
            log.info("metrics on http://{}:{}/metrics", options.metricsAddress(), metricsHttp.port());
        }
        if (bulkPort != null) {
            log.info("bulk port for peers on {}:{}", options.bind(), bulkPort.port());
        }
        if (options.portFile() != null) {
            writePortFile();
        }
        // leases: a few checks a second (a lease is at least 1 s), on a thread of its own (closing a
        // session touches the scheduler's locks, which a transport thread must not wait on)
        this.reaper = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "arrayd-lease-reaper");
            t.setDaemon(true);
            return t;
        });
        if (options.jitNice() > 0) {
            // now, and again now and then: the JVM starts compiler threads as its queue grows
            JitThreadPriority jit = new JitThreadPriority(options.jitNice());
            jit.apply();
            reaper.scheduleWithFixedDelay(jit::apply, 5, 5, TimeUnit.SECONDS);
        }
        if (clock == Clock.SYSTEM) {
            reaper.scheduleWithFixedDelay(() -> {
                try {
                    sessions.reapExpired();
                    if (this.regions != null) {
                        this.regions.retireReady();
                    }
                } catch (RuntimeException e) {
                    log.error("lease reaper", e);
                }
            }, 100, 100, TimeUnit.MILLISECONDS);
        }
    }

    /** Starts a daemon with authentication, TLS and quotas; returns once it is listening. */
    public static ArraydServer start(ServerOptions options, SecurityOptions security) throws IOException {
        return new ArraydServer(options, security, Clock.SYSTEM, null);
    }

    /** The heap budget of downloads not yet sent (tests check that every download gives back what it held). */
    TransferMemory transferMemory() {
        return transferMemory;
    }

    /** The services the daemon serves, as registered (tests enumerate their methods). */
    java.util.List<ServerServiceDefinition> services() {
        return server.getServices();
    }

    /** Sessions with their tenants and leases. */
    SessionRegistry sessions() {
        return sessions;
    }

    /** The version in the jar's manifest, or "dev" when run from classes. */
    @SuppressWarnings("deprecation") // the v1alpha service is deprecated upstream, and still what older tools ask
    private static ServerServiceDefinition legacyReflection() {
        return io.grpc.protobuf.services.ProtoReflectionService.newInstance().bindService();
    }

    public static String version() {
        String v = ArraydServer.class.getPackage().getImplementationVersion();
        return v == null ? "dev" : v;
    }

    /** The bound metrics port, or -1 when there is no metrics endpoint. */
    /** The Unix domain socket the daemon listens on too, or null. */
    public java.nio.file.Path unixSocket() {
        return unixSocket == null ? null : unixSocket.path();
    }

    public int metricsPort() {
        return metricsHttp == null ? -1 : metricsHttp.port();
    }

    public ArraydMetrics metrics() {
        return metrics;
    }

    /** Starts a daemon; returns once it is listening. */
    public static ArraydServer start(ServerOptions options) throws IOException {
        return start(options, SecurityOptions.NONE);
    }

    /** The bulk port peers read through, or -1 when there is none. */
    public int bulkPort() {
        return bulkPort == null ? -1 : bulkPort.port();
    }

    /** The bound port (useful with port 0). */
    public int port() {
        return server.getListenSockets().getFirst() instanceof InetSocketAddress a ? a.getPort() : -1;
    }

    public Scheduler scheduler() {
        return scheduler;
    }

    /** Blocks until the server has shut down. */
    public void awaitTermination() throws InterruptedException {
        server.awaitTermination();
    }

    /** The services and interceptors, the same on every listener (TCP, and the Unix socket when there is one). */
    private Server assemble(ServerBuilder<?> builder, dev.arrayd.server.auth.AuthInterceptor auth,
            SecurityOptions security) {
        return builder
                .directExecutor()
                .maxInboundMessageSize(options.maxMessageBytes())
                // the last added runs first: metrics see the whole call, logs of the call carry its id
                .intercept(new dev.arrayd.server.tracing.TraceContextInterceptor(tracing)) // the client's trace
                .intercept(RequestParser.interceptor()) // a request that did not parse never reaches a handler
                .intercept(new CallLeaseHold(sessions)) // a call in progress keeps the session it names alive
                .intercept(auth) // runs after the two below: refused calls are counted and carry a request id
                .intercept(new RequestIdInterceptor())
                .intercept(new GrpcMetricsInterceptor(metrics.registry()))
                .intercept(StatusText.interceptor()) // bounds every status, whoever made it
                .intercept(ErrorDetails.interceptor()) // outermost: details of the bounded final status
                .addService(RequestParser.strict(new DeviceGrpcService(scheduler, backends::statuses).bindService()))
                .addService(RequestParser.strict(new SessionGrpcService(sessions, options.leaseMillis()).bindService()))
                .addService(RequestParser.strict(new BufferGrpcService(scheduler, sessions, options.maxMessageBytes(),
                        downloadArrays, transferMemory)
                        .bindService()))
                .addService(RequestParser.strict(new KernelGrpcService(scheduler, sessions, compileExecutor).bindService()))
                .addService(RequestParser.strict(new ExecutionGrpcService(scheduler, sessions,
                        new Admission(security.sessionMaxInFlight()), completionLinger, downloadArrays, transferMemory)
                        .bindService()))
                .addService(RequestParser.strict(new SharingGrpcService(scheduler, sessions).bindService()))
                .addService(RequestParser.strict(new RegionGrpcService(sessions).bindService()))
                .addService(RequestParser.strict(new DiagnosticsGrpcService().bindService()))
                .addService(RequestParser.strict(new PeerGrpcService(scheduler, sessions, backends.remote(), bulkPort).bindService()))
                .addService(RequestParser.strict(new StatsGrpcService(scheduler, metrics, version()).bindService()))
                .addService(RequestParser.strict(health.service().bindService()))
                .addService(RequestParser.strict(ProtoReflectionServiceV1.newInstance().bindService()))
                // older tools (grpcurl before 1.9, Postman, some IDEs) ask the v1alpha service only
                .addService(RequestParser.strict(legacyReflection()))
                .build();
    }

    /**
     * Graceful shutdown, in this order: (1) every health service NOT_SERVING; (2) new sessions,
     * buffers, streams, compilations and commands refused with UNAVAILABLE ("arrayd is shutting
     * down"); (3) accepted work drains for up to the {@code shutdown-grace} period; (4) what has not
     * finished is failed with UNAVAILABLE; (5) sessions close, which ends their streams after their
     * last completions; (6) the gRPC server stops (2 s for calls still open, then they are
     * cancelled) and the metrics endpoint closes; (7) devices and pools are released. Idempotent.
     */
    @Override
    public void close() {
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        long grace = options.shutdownGraceMillis();
        log.info("shutting down: health NOT_SERVING, new sessions and commands refused, draining accepted work "
                + "for up to {} ms", grace);
        // refuse new work before announcing NOT_SERVING: whoever sees NOT_SERVING also sees new work refused
        scheduler.beginShutdown();
        health.shuttingDown();
        reaper.shutdownNow();
        boolean drained;
        try {
            scheduler.idle().get(grace, TimeUnit.MILLISECONDS);
            drained = true;
        } catch (TimeoutException e) {
            drained = false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            drained = false;
        } catch (ExecutionException e) {
            drained = true; // an event listener threw; the events themselves are done
        }
        if (drained) {
            log.info("drained: every accepted command finished");
        } else {
            int n = scheduler.abortPending(new ArraydException(ErrorCode.UNAVAILABLE, "arrayd is shutting down: this "
                    + "command did not finish within the shutdown grace period of " + grace + " ms"));
            log.warn("shutdown grace period of {} ms over: failed {} unfinished commands with UNAVAILABLE", grace, n);
        }
        for (var s : java.util.List.copyOf(scheduler.sessions())) {
            scheduler.closeSession(s); // ends its session streams once their completions are sent
        }
        server.shutdown();
        if (bulkPort != null) {
            bulkPort.close();
        }
        try {
            if (unixSocket != null) {
                unixSocket.shutdown(2_000);
            }
            if (!server.awaitTermination(2, TimeUnit.SECONDS)) {
                server.shutdownNow();
                server.awaitTermination(2, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.shutdownNow();
        }
        if (unixSocket != null) {
            unixSocket.close(); // and its socket file
        }
        if (metricsHttp != null) {
            metricsHttp.close();
        }
        closeScheduler();
        log.info("arrayd stopped");
    }

    private void closeScheduler() {
        if (bulkPort != null) {
            bulkPort.close(); // (closed already on a shutdown; on a failed start, here)
        }
        compileExecutor.shutdownNow();
        completionLinger.close();
        tracing.close();
        scheduler.close(2_000);
        if (regions != null) {
            regions.close(); // once no device uses their memory any more
        }
        backends.close();
        metrics.close();
    }

    private void writePortFile() {
        try {
            var tmp = options.portFile().resolveSibling(options.portFile().getFileName() + ".tmp");
            Files.writeString(tmp, Integer.toString(port()));
            Files.move(tmp, options.portFile(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("--port-file " + options.portFile() + ": cannot write", e);
        }
    }

    private static InetAddress resolve(String bind) {
        return resolve(bind, "--bind");
    }

    private static InetAddress resolve(String address, String flag) {
        try {
            return InetAddress.getByName(address);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(flag + ": " + dev.arrayd.devices.api.Quote.string(address) + " (not an address of this machine)");
        }
    }
}
