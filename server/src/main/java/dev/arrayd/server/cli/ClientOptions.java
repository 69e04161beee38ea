package dev.arrayd.server.cli;

import dev.arrayd.client.ArraydClient;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import picocli.CommandLine.Option;

/** Options every client subcommand shares: where the daemon is and how to authenticate. */
final class ClientOptions {

    @Option(names = "--target", description = "Daemon address host:port (default: ${DEFAULT-VALUE}).",
            defaultValue = Target.DEFAULT)
    String target;

    @Option(names = "--token", description = "Bearer token (default: the ARRAYD_TOKEN environment variable).",
            defaultValue = "${env:ARRAYD_TOKEN}")
    String token;

    ArraydClient connect() {
        Target t = Target.parse(target);
        ArraydClient.Builder b = ArraydClient.builder().target(t.toString());
        if (token != null && !token.isBlank()) {
            b.bearerToken(token);
        }
        return b.build();
    }

    /** A plain channel to the daemon, for the tools that call services the Java client does not wrap. */
    ManagedChannel channel() {
        Target t = Target.parse(target);
        NettyChannelBuilder b = NettyChannelBuilder.forAddress(t.host(), t.port()).usePlaintext();
        if (token != null && !token.isBlank()) {
            Metadata h = new Metadata();
            h.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
            b.intercept(MetadataUtils.newAttachHeadersInterceptor(h));
        }
        return b.build();
    }
}
