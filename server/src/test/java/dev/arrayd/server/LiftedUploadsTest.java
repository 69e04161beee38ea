package dev.arrayd.server;

import static dev.arrayd.server.CancellationTest.eventually;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.util.Durations;
import dev.arrayd.proto.v1.AxisPadding;
import dev.arrayd.proto.v1.BufferServiceGrpc;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.EventCompletion;
import dev.arrayd.proto.v1.EventState;
import dev.arrayd.proto.v1.ExecuteResponse;
import dev.arrayd.proto.v1.ExecutionServiceGrpc;
import dev.arrayd.proto.v1.KernelServiceGrpc;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.ReadBufferResponse;
import dev.arrayd.proto.v1.Scalar;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import dev.arrayd.proto.v1.Upload;
import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.scheduler.Session;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Uploads on the session stream over a real socket: their data stays in the transport's receive buffers until
 * the device has copied it ({@link LiftedUploads}), lands intact (into a CPU buffer piece by piece, into a padded
 * buffer's interior gathered first), and every receive buffer goes back once its commands are done: run, refused,
 * or cancelled while queued. After each test no lifted byte is still held.
 */
class LiftedUploadsTest {

    static final int BIG = UploadSkeleton.MIN_LIFTED_BYTES;

    @TempDir
    Path dir;
    ArraydServer server;
    ManagedChannel channel;
    BufferServiceGrpc.BufferServiceBlockingStub buffers;
    String session;
    SessionStreamProbe stream;

    @BeforeEach
    void start() throws Exception {
        server = new ArraydServer(ServerOptions.defaults().withPort(0).withMetricsPort(-1).withAllowNativeSource(true)
                .withCpuMemoryBytes(64L << 20), SecurityOptions.NONE, Clock.SYSTEM, null);
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext()
                .maxInboundMessageSize(64 << 20).build();
        buffers = BufferServiceGrpc.newBlockingStub(channel);
        session = SessionServiceGrpc.newBlockingStub(channel).openSession(OpenSessionRequest.newBuilder()
                .setClientName("lifted").setLease(Durations.fromSeconds(30)).build()).getSession();
        stream = new SessionStreamProbe(ExecutionServiceGrpc.newStub(channel));
        stream.attach(session);
    }

    @AfterEach
    void stop() throws Exception {
        Scheduler sch = server.scheduler();
        for (Session s : List.copyOf(sch.sessions())) {
            sch.closeSession(s);
        }
        assertTrue(eventually(() -> LiftedUploads.heldBytes() == 0),
                () -> "every receive buffer given back; still held: " + LiftedUploads.heldBytes() + " bytes");
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.close();
    }

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    static Command upload(long event, long buffer, long offset, byte[] data) {
        return Command.newBuilder().setEvent(event).setUpload(Upload.newBuilder().setBuffer(buffer)
                .setOffsetBytes(offset).setData(ByteString.copyFrom(data))).build();
    }

    byte[] read(long buffer) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Iterator<ReadBufferResponse> it = buffers.readBuffer(ReadBufferRequest.newBuilder().setSession(session)
                .setBuffer(buffer).build());
        it.forEachRemaining(r -> out.writeBytes(r.getData().toByteArray()));
        return out.toByteArray();
    }

    static void assertSucceeded(List<EventCompletion> done) {
        for (EventCompletion c : done) {
            assertEquals(EventState.EVENT_STATE_SUCCEEDED, c.getState(), c::toString);
        }
    }

    @Test
    void uploadsOfABatchLandIntactFromTheReceiveBuffersAndGiveThemBack() throws Exception {
        int size = 5 * BIG + 1024; // f32 elements: a multiple of 4
        long buffer = buffers.createBuffer(Protos.f32(session, size / 4)).getBuffer().getBuffer();
        byte[] a = random(2 * BIG + 4, 1);
        byte[] b = random(1024, 2); // small: stays in the request
        byte[] c = random(size - a.length - b.length, 3);
        long liftedBefore = LiftedUploads.liftedBytes();
        stream.send(1, upload(1, buffer, 0, a), upload(2, buffer, a.length, b),
                upload(3, buffer, a.length + b.length, c));
        assertSucceeded(stream.completions(3));
        assertEquals(a.length + c.length, LiftedUploads.liftedBytes() - liftedBefore,
                "the two large uploads were lifted, the small one was not");
        byte[] back = read(buffer);
        ByteArrayOutputStream want = new ByteArrayOutputStream();
        want.writeBytes(a);
        want.writeBytes(b);
        want.writeBytes(c);
        assertArrayEquals(want.toByteArray(), back);
    }

    @Test
    void aPaddedBuffersInteriorTakesLiftedDataGatheredFirst() throws Exception {
        int rows = 200;
        int cols = 100; // 80 000 interior bytes
        long buffer = buffers.createBuffer(Protos.f32(session, rows, cols).toBuilder()
                .addPadding(AxisPadding.newBuilder().setLeft(1).setRight(1))
                .addPadding(AxisPadding.newBuilder().setLeft(2).setRight(0))
                .setPaddingValue(Scalar.newBuilder().setF32(7f)).build()).getBuffer().getBuffer();
        byte[] data = random(rows * cols * 4, 4);
        long liftedBefore = LiftedUploads.liftedBytes();
        stream.send(1, upload(1, buffer, 0, data));
        assertSucceeded(stream.completions(1));
        assertEquals(data.length, LiftedUploads.liftedBytes() - liftedBefore);
        assertArrayEquals(data, read(buffer));
    }

    @Test
    void aRefusedUploadGivesItsReceiveBuffersBack() throws Exception {
        long buffer = buffers.createBuffer(Protos.f32(session, BIG / 4)).getBuffer().getBuffer();
        long liftedBefore = LiftedUploads.liftedBytes();
        // past the buffer's end: the scheduler refuses the batch
        stream.send(7, upload(1, buffer, 4, random(BIG, 5)));
        ExecuteResponse r = stream.next();
        assertTrue(r.hasRejected() && r.getRejected().getBatchId() == 7, r::toString);
        assertTrue(r.getRejected().getMessage().contains("upload"), r::toString);
        assertEquals(BIG, LiftedUploads.liftedBytes() - liftedBefore);
        assertEquals(0, LiftedUploads.heldBytes(), "given back before the rejection was answered");
        // the stream goes on: the same upload in range lands
        byte[] data = random(BIG, 6);
        stream.send(8, upload(2, buffer, 0, data));
        assertSucceeded(stream.completions(1));
        assertArrayEquals(data, read(buffer));
    }

    @Test
    void anUploadQueuedBehindAKernelHoldsItsReceiveBuffersUntilItRanEvenWhenItsStreamIsCancelled() throws Exception {
        GateKernel gate = new GateKernel(dir);
        try {
            long kernel = gate.compile(KernelServiceGrpc.newBlockingStub(channel), session);
            long x = buffers.createBuffer(Protos.f32(session, 1)).getBuffer().getBuffer();
            long buffer = buffers.createBuffer(Protos.f32(session, 4 * BIG / 4)).getBuffer().getBuffer();
            stream.send(1, GateKernel.launch(1, kernel, x), upload(2, buffer, 0, random(4 * BIG, 7))
                    .toBuilder().addWaitEvents(1).build());
            gate.awaitStarted();
            assertTrue(LiftedUploads.heldBytes() >= 4 * BIG, "the queued upload's data is held where it arrived");
            stream.requests.onError(new RuntimeException("the client goes away"));
        } finally {
            gate.open();
        }
        assertTrue(eventually(() -> LiftedUploads.heldBytes() == 0),
                "the upload, run or cancelled, gave its receive buffers back");
    }
}
