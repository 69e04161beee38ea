package dev.arrayd.server.regions;

import io.grpc.netty.shaded.io.netty.bootstrap.ServerBootstrap;
import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelFutureListener;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInitializer;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.SimpleChannelInboundHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.FileDescriptor;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The daemon's shared-memory regions: it creates them (sealed memfds), hands each one's descriptor to
 * the client that claims it on a Unix socket of its own (SCM_RIGHTS; owner-only, beside the gRPC socket),
 * and frees them once their session has nothing in flight. A claim is 128 random bits, used once, known
 * only to the session that created the region: no other session can get the descriptor.
 *
 * <p>Claim protocol: connect, send the claim's 32 hex characters and a newline; receive one descriptor
 * and end of stream. An unknown claim gets end of stream without a descriptor.
 */
public final class RegionBroker implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RegionBroker.class);

    /** Largest claim line accepted (32 hex characters and a newline, with room for a CR). */
    static final int MAX_LINE = 40;
    public static final long MAX_REGION_BYTES = 1L << 40;
    static final long PAGE = 4096;

    private final Path socket;
    private final long capBytes;
    private final java.util.concurrent.atomic.AtomicLong heldBytes = new java.util.concurrent.atomic.AtomicLong();
    private final Channel server;
    private final EventLoopGroup group;
    private final SecureRandom random = new SecureRandom();
    private final Map<String, Region> claims = new ConcurrentHashMap<>();
    private final Queue<Region> retiring = new ConcurrentLinkedQueue<>();
    private final Function<MemorySegment, Runnable> locker;

    private RegionBroker(Path socket, long capBytes, Channel server, EventLoopGroup group,
            Function<MemorySegment, Runnable> locker) {
        this.socket = socket;
        this.capBytes = capBytes;
        this.server = server;
        this.group = group;
        this.locker = locker;
    }

    /** {@link #start(Path, long)} with the default cap. */
    public static RegionBroker start(Path socket) throws IOException {
        return start(socket, 0);
    }

    /**
     * Listens for claims on {@code socket} (a file there is replaced); all regions together hold at most
     * {@code capBytes} (0: a quarter of the memory this JVM sees, its container's limit in a container).
     */
    public static RegionBroker start(Path socket, long capBytes) throws IOException {
        return start(socket, capBytes, segment -> () -> { });
    }

    /**
     * {@link #start(Path, long)}, offering each new region's memory to {@code locker} (the devices page-lock
     * it, so that transfers from and to it skip staging) and running what it returns before the memory goes.
     */
    public static RegionBroker start(Path socket, long capBytes, Function<MemorySegment, Runnable> locker) throws IOException {
        long cap = capBytes > 0 ? capBytes : defaultCap();
        Path abs = socket.toAbsolutePath();
        // a socket left by a daemon that crashed goes (the gRPC socket beside it was found dead already);
        // anything else at the path stays, and the daemon does not start
        if (Files.exists(abs, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            int mode = (Integer) Files.getAttribute(abs, "unix:mode", java.nio.file.LinkOption.NOFOLLOW_LINKS);
            if ((mode & 0170000) != 0140000) {
                throw new IOException(abs + " exists and is not a socket (remove it, or choose another --uds path)");
            }
            Files.delete(abs);
        }
        EventLoopGroup group = new EpollEventLoopGroup(1);
        RegionBroker[] self = new RegionBroker[1];
        try {
            Channel ch = new ServerBootstrap().group(group).channel(EpollServerDomainSocketChannel.class)
                    .childHandler(new ChannelInitializer<DomainSocketChannel>() {
                        @Override
                        protected void initChannel(DomainSocketChannel c) {
                            c.pipeline().addLast(new ClaimHandler(() -> self[0]));
                        }
                    }).bind(new DomainSocketAddress(abs.toString())).sync().channel();
            Files.setPosixFilePermissions(abs, PosixFilePermissions.fromString("rw-------"));
            self[0] = new RegionBroker(abs, cap, ch, group, locker);
            return self[0];
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            throw new IOException("interrupted", e);
        } catch (RuntimeException | IOException e) {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            throw new IOException("cannot listen on " + abs + " (" + e.getMessage() + ")", e);
        }
    }

    /** Where clients claim descriptors. */
    public Path socket() {
        return socket;
    }

    static long defaultCap() {
        var os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long total = os instanceof com.sun.management.OperatingSystemMXBean o ? o.getTotalMemorySize() : 0;
        return total > 0 ? total / 4 : 1L << 30;
    }

    /** Most bytes all regions together may hold. */
    public long capBytes() {
        return capBytes;
    }

    /**
     * A new region of at least {@code bytes} (whole pages); IOException with the reason when the regions'
     * cap or the system refuses.
     */
    public Region create(long bytes, LongSupplier inFlight, Runnable onFreed) throws IOException {
        long size = (bytes + PAGE - 1) / PAGE * PAGE;
        long held = heldBytes.addAndGet(size);
        if (held > capBytes) {
            heldBytes.addAndGet(-size);
            throw new IOException("the regions would hold " + held + " bytes (expected: at most " + capBytes
                    + ", region-memory)");
        }
        SharedMemory memory;
        try {
            memory = SharedMemory.create("arrayd-region", size);
        } catch (IOException | RuntimeException e) {
            heldBytes.addAndGet(-size);
            throw e;
        }
        Runnable unlock;
        try {
            Runnable undo = locker.apply(memory.segment());
            AtomicBoolean undone = new AtomicBoolean();
            unlock = () -> {
                if (undone.compareAndSet(false, true)) {
                    undo.run();
                }
            };
        } catch (RuntimeException e) {
            log.warn("page-locking a region of {} bytes failed; its transfers go through staging", size, e);
            unlock = () -> { };
        }
        Runnable freed = onFreed;
        onFreed = () -> {
            heldBytes.addAndGet(-size);
            freed.run();
        };
        byte[] b = new byte[16];
        random.nextBytes(b);
        String claim = HexFormat.of().formatHex(b);
        Region r = new Region(random.nextLong() >>> 1, memory, claim, inFlight, onFreed,
                new java.util.concurrent.atomic.AtomicInteger(), unlock);
        claims.put(claim, r);
        return r;
    }

    /** Rounds {@code bytes} up as {@link #create} does. */
    public static long pages(long bytes) {
        return (bytes + PAGE - 1) / PAGE * PAGE;
    }

    /** No more claims for it; its memory goes once its session has nothing in flight. */
    public void retire(Region r) {
        claims.remove(r.claim());
        retiring.add(r);
        retireReady();
    }

    /**
     * Frees what can be freed now (called after retirements, after a buffer living in a region is released,
     * and a few times a second; one caller at a time).
     */
    public synchronized void retireReady() {
        for (Region r : retiring) {
            if (r.inFlight().getAsLong() == 0 && r.buffers().get() == 0 && free(r)) {
                retiring.remove(r);
            }
        }
    }

    private static boolean free(Region r) {
        r.unlock().run(); // once, even if the memory is still in use below: it is then merely pageable
        try {
            r.memory().close();
        } catch (IllegalStateException e) {
            return false; // a native call still uses the mapping: next time
        }
        r.onFreed().run();
        return true;
    }

    Region claim(String text) {
        return claims.remove(text);
    }

    /** Stops listening and frees every region left (the daemon stops: nothing is in flight any more). */
    @Override
    public synchronized void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        claims.values().forEach(retiring::add);
        claims.clear();
        for (Region r : retiring) {
            if (free(r)) {
                retiring.remove(r);
            }
        }
        try {
            Files.deleteIfExists(socket);
        } catch (IOException e) {
            // its directory went away: nothing to clean
        }
    }

    /** Reads one claim line, answers with the descriptor (or nothing) and closes. */
    private static final class ClaimHandler extends SimpleChannelInboundHandler<ByteBuf> {

        private final java.util.function.Supplier<RegionBroker> broker;
        private final StringBuilder line = new StringBuilder();

        ClaimHandler(java.util.function.Supplier<RegionBroker> broker) {
            this.broker = broker;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf in) {
            while (in.isReadable()) {
                char c = (char) in.readByte();
                if (c == '\n') {
                    String claim = line.toString().strip();
                    RegionBroker b = broker.get();
                    Region r = b == null ? null : b.claim(claim);
                    if (r == null) {
                        ctx.close();
                    } else {
                        ctx.writeAndFlush(new FileDescriptor(r.memory().fd())).addListener(ChannelFutureListener.CLOSE);
                    }
                    return;
                }
                line.append(c);
                if (line.length() > MAX_LINE) {
                    ctx.close();
                    return;
                }
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
