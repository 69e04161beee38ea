package dev.arrayd.client;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.ServerServiceDefinition;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/** A {@link FakeArrayd} on the in-process transport with a client on a direct-executor channel. */
final class FakeServerHarness implements AutoCloseable {
    final FakeArrayd fake = new FakeArrayd();
    final Server server;
    final ManagedChannel channel;
    final ArraydClient client;

    FakeServerHarness() throws IOException {
        String name = InProcessServerBuilder.generateName();
        InProcessServerBuilder sb = InProcessServerBuilder.forName(name).directExecutor();
        for (ServerServiceDefinition s : fake.services()) {
            sb.addService(s);
        }
        server = sb.build().start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
        client = ArraydClient.builder().channel(channel).bearerToken("t0ken").build();
    }

    /** Closes the client and the server and checks that the channel is released. */
    @Override
    public void close() throws InterruptedException {
        client.close();
        server.shutdownNow();
        assertTrue(server.awaitTermination(5, TimeUnit.SECONDS), "server terminated");
        assertTrue(channel.isTerminated(), "client channel terminated after close()");
    }
}
