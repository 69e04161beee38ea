package dev.arrayd.server;

import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import java.io.IOException;
import java.net.ConnectException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The gRPC listener on a Unix domain socket ({@code uds}), for clients on the same host: the same
 * services, interceptors, authentication and quotas as the TCP port, without TCP's loopback stack. The
 * socket file is made owner-only (0600) as soon as it exists and removed when the daemon stops; a stale
 * one left by a daemon that crashed is replaced, a live one (another daemon answers on it) is not, nor
 * is anything at the path that is not a socket.
 */
final class UnixSocketListener implements AutoCloseable {

    private final Path path;
    private final Server server;
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;

    private UnixSocketListener(Path path, Server server, EventLoopGroup boss, EventLoopGroup workers) {
        this.path = path;
        this.server = server;
        this.boss = boss;
        this.workers = workers;
    }

    /**
     * Listens on {@code path}; {@code assemble} adds the services and interceptors (the TCP server's).
     *
     * @throws IllegalArgumentException naming the path and the reason it cannot be used
     */
    static UnixSocketListener start(Path path, Function<ServerBuilder<?>, Server> assemble) throws IOException {
        if (!Epoll.isAvailable()) {
            throw new IllegalArgumentException("--uds " + path + ": Unix domain sockets need Linux's epoll ("
                    + Epoll.unavailabilityCause() + ")");
        }
        Path abs = path.toAbsolutePath();
        clearStale(abs);
        EventLoopGroup boss = new EpollEventLoopGroup(1);
        EventLoopGroup workers = new EpollEventLoopGroup();
        Server server;
        try {
            server = assemble.apply(NettyServerBuilder.forAddress(new DomainSocketAddress(abs.toString()),
                            ComposingTransport.credentials(null))
                    .channelType(EpollServerDomainSocketChannel.class)
                    .bossEventLoopGroup(boss)
                    .workerEventLoopGroup(workers)
                    .permitKeepAliveTime(10, TimeUnit.SECONDS)
                    .permitKeepAliveWithoutCalls(true));
            server.start();
        } catch (IOException | RuntimeException e) {
            boss.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            workers.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            throw new IllegalArgumentException("--uds " + abs + ": cannot listen (" + e.getMessage() + ")", e);
        }
        UnixSocketListener l = new UnixSocketListener(abs, server, boss, workers);
        try {
            Files.setPosixFilePermissions(abs, PosixFilePermissions.fromString("rw-------"));
        } catch (IOException | RuntimeException e) {
            l.close();
            throw new IllegalArgumentException("--uds " + abs + ": cannot make it owner-only (" + e.getMessage() + ")", e);
        }
        return l;
    }

    /** Removes a socket file nobody answers on; refuses a live socket and anything that is not a socket. */
    static void clearStale(Path path) throws IOException {
        int mode;
        try {
            mode = (Integer) Files.getAttribute(path, "unix:mode", java.nio.file.LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return;
        }
        if ((mode & 0170000) != 0140000) {
            throw new IllegalArgumentException("--uds " + path + ": exists and is not a socket (remove it, or "
                    + "choose another path)");
        }
        try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            probe.connect(UnixDomainSocketAddress.of(path));
            throw new IllegalArgumentException("--uds " + path + ": another process listens on it (stop it, or "
                    + "choose another path)");
        } catch (ConnectException e) {
            Files.deleteIfExists(path); // left by a daemon that did not stop cleanly
        }
    }

    Path path() {
        return path;
    }

    Server server() {
        return server;
    }

    /** Stops accepting; calls still open get {@code graceMillis}, then they are cancelled. */
    void shutdown(long graceMillis) throws InterruptedException {
        server.shutdown();
        if (!server.awaitTermination(graceMillis, TimeUnit.MILLISECONDS)) {
            server.shutdownNow();
            server.awaitTermination(graceMillis, TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public void close() {
        server.shutdownNow();
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            // the directory went away or became read-only: nothing to clean up then
        }
    }
}
