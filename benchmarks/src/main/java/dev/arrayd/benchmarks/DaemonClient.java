package dev.arrayd.benchmarks;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.Session;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.util.concurrent.TimeUnit;

/** A client of a daemon child over its TCP port, with one session; its channel also reaches the daemon's stats. */
record DaemonClient(ManagedChannel channel, ArraydClient client, Session session) implements AutoCloseable {
    static DaemonClient of(DaemonChild d, String name) throws Exception {
        ManagedChannel ch = ManagedChannelBuilder.forAddress("127.0.0.1", d.port()).usePlaintext().directExecutor()
                .maxInboundMessageSize(ArraydClient.DEFAULT_MAX_MESSAGE_BYTES).build();
        ArraydClient c = ArraydClient.builder().channel(ch).build();
        return new DaemonClient(ch, c, c.openSession(name).get(60, TimeUnit.SECONDS));
    }

    @Override
    public void close() throws Exception {
        try {
            session.close();
            client.close();
        } finally {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}
