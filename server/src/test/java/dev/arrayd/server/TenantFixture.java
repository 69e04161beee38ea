package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.util.Durations;
import dev.arrayd.proto.v1.BufferServiceGrpc;
import dev.arrayd.proto.v1.ExecutionServiceGrpc;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import dev.arrayd.proto.v1.SharingServiceGrpc;
import dev.arrayd.scheduler.DeviceRuntime;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A daemon with a token file and a fake clock behind an in-process transport; one {@link Client}
 * per token. On close: every session's memory back in the pools, every channel shut down.
 */
final class TenantFixture implements AutoCloseable {

    static final String ALICE = "alice-token-0123456789abcdef";
    static final String BOB = "bob-token-0123456789abcdef00";

    final FakeClock clock = new FakeClock();
    final Path tokens;
    final ArraydServer server;
    private final String name = "arrayd-tenants-" + UUID.randomUUID();
    private final List<ManagedChannel> channels = new ArrayList<>();

    /** A client authenticated with one token (null = none). */
    final class Client {
        final ManagedChannel channel;
        final SessionServiceGrpc.SessionServiceBlockingStub sessions;
        final BufferServiceGrpc.BufferServiceBlockingStub buffers;
        final ExecutionServiceGrpc.ExecutionServiceBlockingStub exec;
        final ExecutionServiceGrpc.ExecutionServiceStub execAsync;
        final SharingServiceGrpc.SharingServiceBlockingStub sharing;

        Client(String token) {
            InProcessChannelBuilder b = InProcessChannelBuilder.forName(name).directExecutor();
            if (token != null) {
                Metadata h = new Metadata();
                h.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
                b.intercept(MetadataUtils.newAttachHeadersInterceptor(h));
            }
            channel = b.build();
            channels.add(channel);
            sessions = SessionServiceGrpc.newBlockingStub(channel);
            buffers = BufferServiceGrpc.newBlockingStub(channel);
            exec = ExecutionServiceGrpc.newBlockingStub(channel);
            execAsync = ExecutionServiceGrpc.newStub(channel);
            sharing = SharingServiceGrpc.newBlockingStub(channel);
        }

        String openSession(long leaseMillis) {
            return sessions.openSession(OpenSessionRequest.newBuilder().setClientName("t").setLease(Durations.fromMillis(leaseMillis))
                    .build()).getSession();
        }
    }

    TenantFixture(String tokenFile, SecurityOptions security) throws IOException {
        tokens = Files.createTempFile("arrayd-tokens", ".txt");
        Files.writeString(tokens, tokenFile);
        server = new ArraydServer(ServerOptions.defaults().withPort(0).withAllowNativeSource(true)
                .withCpuMemoryBytes(256L << 20), security.withAuthTokens(tokens), clock,
                address -> InProcessServerBuilder.forName(name));
    }

    TenantFixture() throws IOException {
        this(ALICE + " alice weight=3 memory=1MiB streams=1 inflight=100 message=2MiB\n" + BOB + " bob\n",
                SecurityOptions.NONE);
    }

    Client client(String token) {
        return new Client(token);
    }

    SessionRegistry sessions() {
        return server.sessions();
    }

    long usedBytes() {
        return server.scheduler().devices().stream().mapToLong(d -> d.pool().usedBytes()).sum();
    }

    /** Waits (bounded) for in-flight commands to let go of freed memory, then checks the pools are empty. */
    void assertPoolsEmpty() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (DeviceRuntime d : server.scheduler().devices()) {
            while (d.pool().usedBytes() != 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(0, d.pool().usedBytes(), d.id() + ": bytes still allocated");
        }
    }

    @Override
    public void close() throws Exception {
        for (var s : List.copyOf(server.scheduler().sessions())) {
            server.scheduler().closeSession(s);
        }
        assertPoolsEmpty();
        for (ManagedChannel c : channels) {
            c.shutdownNow();
        }
        server.close();
        Files.deleteIfExists(tokens);
    }
}
