package dev.arrayd.client;

import io.grpc.netty.shaded.io.netty.bootstrap.Bootstrap;
import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.ChannelInitializer;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollChannelOption;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketReadMode;
import io.grpc.netty.shaded.io.netty.channel.unix.FileDescriptor;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Receives a region's file descriptor from the daemon (its claim on the regions' Unix socket, answered
 * with SCM_RIGHTS) and maps it shared, read and write.
 */
final class RegionClaim {

    private RegionClaim() {}

    /** The region's memory, mapped in {@code arena}; IOException when the daemon hands out no descriptor. */
    static MemorySegment map(Path socket, String claim, long size, Arena arena) throws IOException {
        CompletableFuture<FileDescriptor> received = new CompletableFuture<>();
        EventLoopGroup group = new EpollEventLoopGroup(1);
        try {
            Channel ch = new Bootstrap().group(group).channel(EpollDomainSocketChannel.class)
                    .option(EpollChannelOption.DOMAIN_SOCKET_READ_MODE, DomainSocketReadMode.FILE_DESCRIPTORS)
                    .handler(new ChannelInitializer<EpollDomainSocketChannel>() {
                        @Override
                        protected void initChannel(EpollDomainSocketChannel c) {
                            c.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                    if (msg instanceof FileDescriptor fd) {
                                        received.complete(fd);
                                    }
                                }

                                @Override
                                public void channelInactive(ChannelHandlerContext ctx) {
                                    received.completeExceptionally(new IOException("the daemon refused claim "
                                            + claim.substring(0, Math.min(8, claim.length())) + "… on " + socket));
                                }

                                @Override
                                public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                    received.completeExceptionally(cause);
                                    ctx.close();
                                }
                            });
                        }
                    }).connect(new DomainSocketAddress(socket.toString())).sync().channel();
            ch.writeAndFlush(Unpooled.copiedBuffer(claim + "\n", StandardCharsets.US_ASCII));
            FileDescriptor fd = received.get(30, TimeUnit.SECONDS);
            try (FileChannel file = FileChannel.open(Path.of("/proc/self/fd/" + fd.intValue()), StandardOpenOption.READ,
                    StandardOpenOption.WRITE)) {
                return file.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            } finally {
                fd.close();
                ch.close();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while claiming a region", e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IOException("no descriptor from " + socket + " within 30 s", e);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
