package dev.arrayd.server;

import io.grpc.ServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.GrpcHttp2ConnectionHandler;
import io.grpc.netty.shaded.io.grpc.netty.InternalNettyServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiator;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiators;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.handler.codec.AdaptiveCumulator;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.util.AsciiString;

/**
 * How the daemon's gRPC connections gather what they read from the socket before HTTP/2 frames are cut from
 * it: reads of {@value #COMPOSE_MIN_BYTES} bytes or more are added to the gathered bytes as they are, not
 * copied onto them ({@link AdaptiveCumulator}); smaller ones are merged.
 *
 * <p>Netty's default copies everything gathered so far, and the new read, into a new buffer whenever a frame
 * is cut in two by a read while frames cut from the buffer before are still held, which is always the case
 * for a large message: its frames are held until the message is whole, and an upload's until its command has
 * run ({@link LiftedUploads}). That copy was a third of the transport thread's profile samples while uploads
 * streamed in.
 *
 * <p>gRPC offers no public way to reach a server connection's handler: this goes through grpc-netty's
 * {@code Internal*} negotiator classes (TLS and plaintext are still grpc-netty's own negotiators), which may
 * change with a gRPC upgrade (a compile error then, caught by the build).
 */
final class ComposingTransport {

    /** Reads from this size on are composed rather than merged. */
    static final int COMPOSE_MIN_BYTES = 1024;

    private ComposingTransport() {}

    /** Plaintext credentials, or TLS with {@code tls} when it is not null, whose connections compose their reads. */
    static ServerCredentials credentials(SslContext tls) {
        InternalProtocolNegotiator.ProtocolNegotiator negotiator = tls == null
                ? InternalProtocolNegotiators.serverPlaintext() : InternalProtocolNegotiators.serverTls(tls);
        return InternalNettyServerCredentials.create(new Composing(negotiator));
    }

    private record Composing(InternalProtocolNegotiator.ProtocolNegotiator delegate)
            implements InternalProtocolNegotiator.ProtocolNegotiator {

        @Override
        public AsciiString scheme() {
            return delegate.scheme();
        }

        @Override
        public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpcHandler) {
            grpcHandler.setCumulator(new AdaptiveCumulator(COMPOSE_MIN_BYTES));
            return delegate.newHandler(grpcHandler);
        }

        @Override
        public void close() {
            delegate.close();
        }
    }
}
