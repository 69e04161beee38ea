package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.arrayd.proto.v1.BufferServiceGrpc;
import dev.arrayd.proto.v1.DeviceServiceGrpc;
import dev.arrayd.proto.v1.ExecutionServiceGrpc;
import dev.arrayd.proto.v1.KernelServiceGrpc;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import dev.arrayd.scheduler.DeviceRuntime;
import io.grpc.ManagedChannel;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.io.IOException;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The real services, scheduler and CPU backend behind an in-process transport. On close it checks
 * that every session's memory went back to the pools and that the server and channel shut down.
 */
final class ServerFixture implements AutoCloseable {

    final ArraydServer server;
    final ManagedChannel channel;
    final DeviceServiceGrpc.DeviceServiceBlockingStub devices;
    final SessionServiceGrpc.SessionServiceBlockingStub sessions;
    final BufferServiceGrpc.BufferServiceBlockingStub buffers;
    final BufferServiceGrpc.BufferServiceStub buffersAsync;
    final KernelServiceGrpc.KernelServiceBlockingStub kernels;
    final ExecutionServiceGrpc.ExecutionServiceBlockingStub exec;
    final ExecutionServiceGrpc.ExecutionServiceStub execAsync;

    ServerFixture(boolean allowNativeSource) throws IOException {
        this(ServerOptions.defaults().withPort(0).withAllowNativeSource(allowNativeSource).withCpuMemoryBytes(256L << 20));
    }

    ServerFixture(ServerOptions options) throws IOException {
        String name = "arrayd-test-" + UUID.randomUUID();
        server = new ArraydServer(options, address -> InProcessServerBuilder.forName(name));
        channel = InProcessChannelBuilder.forName(name).directExecutor().maxInboundMessageSize(64 << 20).build();
        devices = DeviceServiceGrpc.newBlockingStub(channel);
        sessions = SessionServiceGrpc.newBlockingStub(channel);
        buffers = BufferServiceGrpc.newBlockingStub(channel);
        buffersAsync = BufferServiceGrpc.newStub(channel);
        kernels = KernelServiceGrpc.newBlockingStub(channel);
        exec = ExecutionServiceGrpc.newBlockingStub(channel);
        execAsync = ExecutionServiceGrpc.newStub(channel);
    }

    String openSession() {
        return sessions.openSession(OpenSessionRequest.newBuilder().setClientName("test").build()).getSession();
    }

    @Override
    public void close() throws InterruptedException {
        for (var s : server.scheduler().sessions()) {
            server.scheduler().closeSession(s);
        }
        // closing a session frees memory once in-flight commands finish: wait for the pools to drain
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (DeviceRuntime d : server.scheduler().devices()) {
            while (d.pool().usedBytes() != 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(0, d.pool().usedBytes(), d.id() + ": bytes still allocated after every session closed");
        }
        // and every transfer gave back the transfer memory it held (it ran, its data was sent, its call or graph ended)
        while (server.transferMemory().held() != 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(0, server.transferMemory().held(), "transfer memory still held after every session closed");
        channel.shutdownNow();
        server.close();
        assertEquals(true, channel.awaitTermination(5, TimeUnit.SECONDS), "channel terminated");
    }
}
