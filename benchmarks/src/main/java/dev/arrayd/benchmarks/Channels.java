package dev.arrayd.benchmarks;

import dev.arrayd.client.ArraydClient;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;

/** The one channel a scenario measures on, shared by arrayd's client and the anchor's raw stub. */
final class Channels {

    private Channels() {}

    /**
     * Netty, direct executor (a thread hop per message would cost more than what is measured), the
     * client's message size limit.
     */
    static ManagedChannel open(BenchContext ctx) {
        return NettyChannelBuilder.forAddress(ctx.host(), ctx.port())
                .usePlaintext()
                .directExecutor()
                .maxInboundMessageSize(ArraydClient.DEFAULT_MAX_MESSAGE_BYTES)
                .build();
    }
}
