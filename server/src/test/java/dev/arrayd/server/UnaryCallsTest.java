package dev.arrayd.server;

import static dev.arrayd.server.Protos.f32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.arrayd.proto.v1.AwaitStreamRequest;
import dev.arrayd.proto.v1.AwaitStreamResponse;
import dev.arrayd.proto.v1.BufferInfo;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CreateStreamRequest;
import dev.arrayd.proto.v1.DescribeBufferRequest;
import dev.arrayd.proto.v1.DestroyStreamRequest;
import dev.arrayd.proto.v1.EventState;
import dev.arrayd.proto.v1.Fill;
import dev.arrayd.proto.v1.GetDeviceRequest;
import dev.arrayd.proto.v1.QueryEventsRequest;
import dev.arrayd.proto.v1.ReadBufferResponse;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.Scalar;
import dev.arrayd.proto.v1.CreateStreamResponse;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.WaitEventsRequest;
import dev.arrayd.proto.v1.WriteBufferRequest;
import dev.arrayd.proto.v1.WriteBufferResponse;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The unary and bulk-data calls for simple clients, against the real server and CPU backend. */
class UnaryCallsTest {

    ServerFixture f;
    String session;

    @BeforeEach
    void setUp() throws Exception {
        f = new ServerFixture(true);
        session = f.openSession();
    }

    @AfterEach
    void tearDown() throws Exception {
        f.close();
    }

    @Test
    void streamedWriteAndReadRoundTripInChunks() throws Exception {
        int bytes = (3 << 20) + 4096;
        BufferInfo b = f.buffers.createBuffer(f32(session, bytes / 4)).getBuffer();
        byte[] data = new byte[bytes];
        new Random(7).nextBytes(data);
        CompletableFuture<WriteBufferResponse> written = new CompletableFuture<>();
        StreamObserver<WriteBufferRequest> w = f.buffersAsync.writeBuffer(BadInputTest.observer(written));
        int chunk = 1 << 20;
        for (int off = 0; off < bytes; off += chunk) {
            WriteBufferRequest.Builder c = WriteBufferRequest.newBuilder().setOffsetBytes(off)
                    .setData(ByteString.copyFrom(data, off, Math.min(chunk, bytes - off)));
            if (off == 0) {
                c.setSession(session).setBuffer(b.getBuffer()).setEvent(41);
            }
            w.onNext(c.build());
        }
        w.onCompleted();
        WriteBufferResponse resp = written.get(30, TimeUnit.SECONDS);
        assertEquals(41, resp.getEvent(), "the last chunk carries the client's event");
        assertEquals(bytes, resp.getBytesWritten());

        Iterator<ReadBufferResponse> chunks = f.buffers.readBuffer(ReadBufferRequest.newBuilder().setSession(session)
                .setBuffer(b.getBuffer()).setChunkBytes(1 << 20).build());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int count = 0;
        while (chunks.hasNext()) {
            ReadBufferResponse c = chunks.next();
            assertEquals(out.size(), c.getOffsetBytes(), "chunks arrive in order");
            c.getData().writeTo(out);
            count++;
        }
        assertEquals(4, count);
        assertTrue(java.util.Arrays.equals(data, out.toByteArray()), "read back what was written");

        // a sub-range read
        Iterator<ReadBufferResponse> part = f.buffers.readBuffer(ReadBufferRequest.newBuilder().setSession(session)
                .setBuffer(b.getBuffer()).setOffsetBytes(100).setSizeBytes(8).build());
        assertEquals(ByteString.copyFrom(data, 100, 8), part.next().getData());
        assertEquals(bytes, f.buffers.describeBuffer(DescribeBufferRequest.newBuilder().setSession(session)
                .setBuffer(b.getBuffer()).build()).getBuffer().getSizeBytes());
    }

    /**
     * Reads of several sizes at once (at, below and above the size whose windows are kept for reuse), each read by a
     * client that takes one chunk at a time: every read gets its own buffer's bytes, all of them, in order.
     */
    @Test
    void concurrentSlowReadsEachGetTheirOwnBytes() throws Exception {
        int[] floats = {1 << 18, 3 << 18, 2 << 20, (9 << 20) / 4, 17};
        long[] buffers = new long[floats.length];
        SubmitRequest.Builder fills = SubmitRequest.newBuilder().setSession(session);
        for (int i = 0; i < floats.length; i++) {
            buffers[i] = f.buffers.createBuffer(f32(session, floats[i])).getBuffer().getBuffer();
            fills.addCommands(Command.newBuilder().setFill(Fill.newBuilder().setBuffer(buffers[i])
                    .setValue(Scalar.newBuilder().setF32(i + 1))));
        }
        f.exec.waitEvents(WaitEventsRequest.newBuilder().setSession(session)
                .addAllEvents(f.exec.submit(fills.build()).getEventsList()).build());
        for (int round = 0; round < 3; round++) {
            List<CompletableFuture<ByteArrayOutputStream>> reads = new ArrayList<>();
            for (int i = 0; i < floats.length; i++) {
                CompletableFuture<ByteArrayOutputStream> got = new CompletableFuture<>();
                reads.add(got);
                f.buffersAsync.readBuffer(ReadBufferRequest.newBuilder().setSession(session).setBuffer(buffers[i])
                        .setChunkBytes(1 << 20).build(), new ClientResponseObserver<ReadBufferRequest, ReadBufferResponse>() {
                            private ClientCallStreamObserver<ReadBufferRequest> call;
                            private final ByteArrayOutputStream out = new ByteArrayOutputStream();

                            @Override
                            public void beforeStart(ClientCallStreamObserver<ReadBufferRequest> call) {
                                this.call = call;
                                call.disableAutoRequestWithInitial(1);
                            }

                            @Override
                            public void onNext(ReadBufferResponse r) {
                                if (r.getOffsetBytes() != out.size()) {
                                    got.completeExceptionally(new AssertionError("chunk at " + r.getOffsetBytes()
                                            + " after " + out.size() + " bytes"));
                                }
                                out.writeBytes(r.getData().toByteArray());
                                call.request(1);
                            }

                            @Override
                            public void onError(Throwable t) {
                                got.completeExceptionally(t);
                            }

                            @Override
                            public void onCompleted() {
                                got.complete(out);
                            }
                        });
            }
            for (int i = 0; i < floats.length; i++) {
                byte[] bytes = reads.get(i).get(60, TimeUnit.SECONDS).toByteArray();
                assertEquals(4L * floats[i], bytes.length, "buffer " + i + ": every byte");
                var values = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
                for (int k = 0; k < floats[i]; k++) {
                    if (values.get(k) != i + 1) {
                        throw new AssertionError("buffer " + i + ", round " + round + ": element " + k + " is "
                                + values.get(k) + " (expected: " + (i + 1) + ")");
                    }
                }
            }
        }
    }

    @Test
    void queryWaitAndAwaitStreamReportEventStates() {
        BufferInfo b = f.buffers.createBuffer(f32(session, 1 << 16)).getBuffer();
        CreateStreamResponse st = f.exec.createStream(CreateStreamRequest.newBuilder().setSession(session).setDevice("cpu:0").build());
        assertEquals("cpu:0", st.getDevice());
        var events = f.exec.submit(SubmitRequest.newBuilder().setSession(session)
                .addCommands(Command.newBuilder().setStream(st.getStream()).setFill(Fill.newBuilder()
                        .setBuffer(b.getBuffer()).setValue(Scalar.newBuilder().setF32(2f))))
                .addCommands(Command.newBuilder().setEvent(5).setStream(st.getStream()).setFill(Fill.newBuilder()
                        .setBuffer(b.getBuffer()).setValue(Scalar.newBuilder().setF32(3f))))
                .build());
        assertTrue(events.getEvents(0) >= (1L << 62), "an id left 0 is assigned from 2^62 up");
        assertEquals(5, events.getEvents(1));
        AwaitStreamResponse awaited = f.exec.awaitStream(AwaitStreamRequest.newBuilder().setSession(session)
                .setStream(st.getStream()).build());
        assertEquals(EventState.EVENT_STATE_SUCCEEDED, awaited.getLast().getState());
        assertTrue(awaited.getIdle());
        var q = f.exec.queryEvents(QueryEventsRequest.newBuilder().setSession(session)
                .addEvents(events.getEvents(0)).addEvents(5).build());
        assertEquals(EventState.EVENT_STATE_SUCCEEDED, q.getCompletions(0).getState());
        assertEquals(5, q.getCompletions(1).getEvent());
        var w = f.exec.waitEvents(WaitEventsRequest.newBuilder().setSession(session).addEvents(5).build());
        assertEquals(EventState.EVENT_STATE_SUCCEEDED, w.getCompletions(0).getState());
        // the default stream of a device, by device id
        assertEquals(EventState.EVENT_STATE_SUCCEEDED, f.exec.awaitStream(AwaitStreamRequest.newBuilder().setSession(session)
                .setDevice("cpu:0").build()).getLast().getState());
        f.exec.destroyStream(DestroyStreamRequest.newBuilder().setSession(session).setStream(st.getStream()).build());
        BadInputTest.assertStatus(Status.Code.NOT_FOUND, "(not found in this session)", () -> f.exec.destroyStream(
                DestroyStreamRequest.newBuilder().setSession(session).setStream(st.getStream()).build()));
        BadInputTest.assertStatus(Status.Code.NOT_FOUND, "device: \"cpu:9\" (not found",
                () -> f.devices.getDevice(GetDeviceRequest.newBuilder().setDevice("cpu:9").build()).getDevice());
        assertEquals("cpu:0", f.devices.getDevice(GetDeviceRequest.newBuilder().setDevice("cpu:0").build()).getDevice().getId());
    }
}
