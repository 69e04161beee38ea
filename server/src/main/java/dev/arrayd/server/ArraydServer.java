package dev.arrayd.server;

import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.scheduler.SchedulerConfig;
import io.grpc.Server;
import io.grpc.ServerBuilder;
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
import java.util.concurrent.TimeUnit;
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
 * <p>Shutdown ({@link #close()}): stop accepting calls, give running calls a grace period, then
 * close the scheduler (which waits for submitted work), the devices and their pools.
 */
public final class ArraydServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ArraydServer.class);

    private final ServerOptions options;
    private final Backends backends;
    private final Scheduler scheduler;
    private final ExecutorService compileExecutor;
    private final Server server;

    private ArraydServer(ServerOptions options) throws IOException {
        this(options, null);
    }

    /**
     * @param transport builds the transport for the bound address; null = Netty on TCP. Tests pass an
     *                  in-process transport.
     */
    ArraydServer(ServerOptions options, java.util.function.Function<InetSocketAddress, ServerBuilder<?>> transport)
            throws IOException {
        this.options = options;
        InetAddress bindAddress = resolve(options.bind());
        if (!bindAddress.isLoopbackAddress() && !options.insecure()) {
            throw new IllegalArgumentException("--bind " + options.bind() + ": refusing to listen beyond loopback without "
                    + "authentication; arrayd has no authentication configured, so anyone who can reach the port could "
                    + "use the devices (pass --insecure to do it anyway)");
        }
        this.backends = new Backends(DeviceRequest.parseList(options.devices()), options);
        SchedulerConfig config = SchedulerConfig.defaults().withAllowNativeSource(options.allowNativeSource())
                .withFastPathNanos(options.fastPathNanos());
        Scheduler sch = null;
        try {
            sch = new Scheduler(config, backends.devices(), backends.compilers());
        } catch (RuntimeException e) {
            backends.close();
            throw e;
        }
        this.scheduler = sch;
        AtomicInteger n = new AtomicInteger();
        this.compileExecutor = Executors.newFixedThreadPool(Math.max(1, Runtime.getRuntime().availableProcessors()), r -> {
            Thread t = new Thread(r, "arrayd-compile-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        InetSocketAddress address = new InetSocketAddress(bindAddress, options.port());
        ServerBuilder<?> builder = transport != null ? transport.apply(address)
                : NettyServerBuilder.forAddress(address)
                        .permitKeepAliveTime(10, TimeUnit.SECONDS)
                        .permitKeepAliveWithoutCalls(true);
        this.server = builder
                .directExecutor()
                .maxInboundMessageSize(options.maxMessageBytes())
                .addService(new DeviceGrpcService(scheduler, backends.statuses()))
                .addService(new SessionGrpcService(scheduler, options.leaseMillis()))
                .addService(new BufferGrpcService(scheduler, options.maxMessageBytes()))
                .addService(new KernelGrpcService(scheduler, compileExecutor))
                .addService(new ExecutionGrpcService(scheduler))
                .addService(new DiagnosticsGrpcService())
                .addService(ProtoReflectionServiceV1.newInstance())
                .build();
        try {
            server.start();
        } catch (IOException | RuntimeException e) {
            closeScheduler();
            throw e;
        }
        log.info("arrayd listening on {}:{} with devices {}{}", options.bind(), port(),
                scheduler.devices(), options.allowNativeSource() ? " (native kernel source allowed)" : "");
        if (options.portFile() != null) {
            writePortFile();
        }
    }

    /** Starts a daemon; returns once it is listening. */
    public static ArraydServer start(ServerOptions options) throws IOException {
        return new ArraydServer(options);
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

    @Override
    public void close() {
        server.shutdown();
        try {
            if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
                server.shutdownNow();
                server.awaitTermination(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.shutdownNow();
        }
        closeScheduler();
        log.info("arrayd stopped");
    }

    private void closeScheduler() {
        compileExecutor.shutdownNow();
        scheduler.close();
        backends.close();
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
        try {
            return InetAddress.getByName(bind);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("--bind: \"" + bind + "\" (not an address of this machine)");
        }
    }
}
