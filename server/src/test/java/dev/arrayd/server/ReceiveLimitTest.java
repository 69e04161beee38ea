package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.arrayd.devices.api.testing.ResourcesPerClass;
import dev.arrayd.proto.v1.Attach;
import dev.arrayd.proto.v1.BufferServiceGrpc;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CommandBatch;
import dev.arrayd.proto.v1.CreateBufferRequest;
import dev.arrayd.proto.v1.DataType;
import dev.arrayd.proto.v1.Download;
import dev.arrayd.proto.v1.EventCompletion;
import dev.arrayd.proto.v1.EventState;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.ExecuteResponse;
import dev.arrayd.proto.v1.ExecutionServiceGrpc;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.ReadBufferResponse;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.Upload;
import dev.arrayd.proto.v1.WaitEventsRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A client that accepts small messages (gRPC's default 4 MiB, or less) is sent nothing larger: through a real
 * socket, with the client's channel enforcing its limit, a download larger than the limit arrives on the
 * session stream in pieces that reassemble to the data, and ReadBuffer's chunks fit.
 */
@ResourcesPerClass("one daemon on a real socket serves every test")
class ReceiveLimitTest {

    static ArraydServer server;

    @BeforeAll
    static void start() throws IOException {
        server = ArraydServer.start(ServerOptions.defaults().withPort(0).withMetricsPort(-1).withCpuMemoryBytes(128L << 20));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + (i >>> 12));
        }
        return b;
    }

    /**
     * A session whose client accepts {@code limit} bytes (0 = says nothing: 4 MiB), a buffer of {@code n} bytes
     * holding {@link #pattern}, downloaded on the session stream; the data reassembled from its pieces.
     */
    @ParameterizedTest
    @ValueSource(ints = {0, 64 << 10, 1 << 20})
    void aDownloadLargerThanTheClientsLimitArrivesInPiecesThatFit(int limit) throws Exception {
        int channelLimit = limit == 0 ? 4 << 20 : limit;
        int n = limit == 0 ? 12 << 20 : 3 * limit + 12345;
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext()
                .maxInboundMessageSize(channelLimit).build();
        try {
            String session = SessionServiceGrpc.newBlockingStub(ch).openSession(OpenSessionRequest.newBuilder()
                    .setClientName("small").setMaxReceiveMessageBytes(limit).build()).getSession();
            long buf = BufferServiceGrpc.newBlockingStub(ch).createBuffer(CreateBufferRequest.newBuilder().setSession(session)
                    .setDtype(DataType.DATA_TYPE_U8).addDims(n).build()).getBuffer().getBuffer();
            byte[] data = pattern(n);
            var exec = ExecutionServiceGrpc.newBlockingStub(ch);
            for (int off = 0; off < n; off += 1 << 20) {
                int len = Math.min(1 << 20, n - off);
                long ev = exec.submit(SubmitRequest.newBuilder().setSession(session).addCommands(Command.newBuilder()
                        .setUpload(Upload.newBuilder().setBuffer(buf).setOffsetBytes(off)
                                .setData(ByteString.copyFrom(data, off, len)))).build()).getEvents(0);
                exec.waitEvents(WaitEventsRequest.newBuilder().setSession(session).addEvents(ev).build());
            }
            List<EventCompletion> pieces = new ArrayList<>();
            CompletableFuture<Void> done = new CompletableFuture<>();
            StreamObserver<ExecuteRequest> requests = ExecutionServiceGrpc.newStub(ch).execute(new StreamObserver<>() {
                @Override
                public void onNext(ExecuteResponse r) {
                    if (r.hasCompletions()) {
                        pieces.addAll(r.getCompletions().getCompletionsList());
                        if (!pieces.getLast().getMoreData()) {
                            done.complete(null);
                        }
                    }
                }

                @Override
                public void onError(Throwable t) {
                    done.completeExceptionally(t);
                }

                @Override
                public void onCompleted() {
                }
            });
            requests.onNext(ExecuteRequest.newBuilder().setAttach(Attach.newBuilder().setSession(session)).build());
            requests.onNext(ExecuteRequest.newBuilder().setBatch(CommandBatch.newBuilder().addCommands(Command.newBuilder()
                    .setEvent(1).setDownload(Download.newBuilder().setBuffer(buf)))).build());
            done.get(60, TimeUnit.SECONDS);
            requests.onCompleted();
            assertTrue(pieces.size() >= 3, "pieces: " + pieces.size());
            ByteArrayOutputStream whole = new ByteArrayOutputStream();
            for (EventCompletion p : pieces) {
                assertEquals(1, p.getEvent());
                assertEquals(EventState.EVENT_STATE_SUCCEEDED, p.getState());
                assertEquals(whole.size(), p.getDataOffset(), "pieces in order, without gaps");
                p.getData().writeTo(whole);
            }
            assertArrayEquals(data, whole.toByteArray());
            // ReadBuffer's chunks fit too
            Iterator<ReadBufferResponse> chunks = BufferServiceGrpc.newBlockingStub(ch).readBuffer(ReadBufferRequest.newBuilder()
                    .setSession(session).setBuffer(buf).build());
            ByteArrayOutputStream read = new ByteArrayOutputStream();
            chunks.forEachRemaining(c -> {
                try {
                    c.getData().writeTo(read);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertArrayEquals(data, read.toByteArray());
        } finally {
            ch.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aLimitBelowTheMinimumIsInvalidArgument() {
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
        try {
            StatusRuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(StatusRuntimeException.class,
                    () -> SessionServiceGrpc.newBlockingStub(ch).openSession(OpenSessionRequest.newBuilder()
                            .setMaxReceiveMessageBytes(1000).build()));
            assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
            assertTrue(e.getStatus().getDescription().contains("max_receive_message_bytes: 1000"), e::getMessage);
        } finally {
            ch.shutdownNow();
        }
    }
}
