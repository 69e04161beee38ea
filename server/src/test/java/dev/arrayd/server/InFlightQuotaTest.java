package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.arrayd.proto.v1.BufferServiceGrpc;
import dev.arrayd.proto.v1.KernelServiceGrpc;
import dev.arrayd.proto.v1.ReadBufferResponse;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.WaitEventsRequest;
import dev.arrayd.proto.v1.WriteBufferRequest;
import dev.arrayd.proto.v1.WriteBufferResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The in-flight quota counts WriteBuffer and ReadBuffer calls in progress (one each, until they have
 * answered), not only submitted commands: a tenant cannot get past it by streaming.
 */
@Timeout(60)
class InFlightQuotaTest {

    static final String CAROL = "carol-token-0123456789abcdef";

    @TempDir
    Path dir;
    TenantFixture f;
    TenantFixture.Client carol;
    BufferServiceGrpc.BufferServiceStub buffersAsync;
    String session;
    long buffer;

    @BeforeEach
    void setUp() throws Exception {
        f = new TenantFixture(CAROL + " carol inflight=2\n", SecurityOptions.NONE);
        carol = f.client(CAROL);
        buffersAsync = BufferServiceGrpc.newStub(carol.channel);
        session = carol.openSession(60_000);
        buffer = carol.buffers.createBuffer(Protos.f32(session, 16)).getBuffer().getBuffer();
    }

    @AfterEach
    void tearDown() throws Exception {
        f.close();
    }

    /** A call's answer (or its failure) as a future. */
    static final class Answer<T> implements StreamObserver<T> {
        final CompletableFuture<T> value = new CompletableFuture<>();
        T last;

        @Override
        public void onNext(T v) {
            last = v;
        }

        @Override
        public void onError(Throwable t) {
            value.completeExceptionally(t);
        }

        @Override
        public void onCompleted() {
            value.complete(last);
        }

        Status status() throws Exception {
            try {
                value.get(30, TimeUnit.SECONDS);
                return Status.OK;
            } catch (java.util.concurrent.ExecutionException e) {
                return Status.fromThrowable(e.getCause());
            }
        }
    }

    LongSupplier inFlight() {
        return () -> f.sessions().usageOf("carol").inFlight.get();
    }

    static void awaitValue(LongSupplier v, long expected) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (v.getAsLong() != expected) {
            assertTrue(System.nanoTime() < deadline, "in flight: " + v.getAsLong() + " (expected: " + expected + ")");
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    StreamObserver<WriteBufferRequest> startWrite(Answer<WriteBufferResponse> answer) {
        StreamObserver<WriteBufferRequest> w = buffersAsync.writeBuffer(answer);
        w.onNext(WriteBufferRequest.newBuilder().setSession(session).setBuffer(buffer)
                .setData(ByteString.copyFrom(new byte[16])).build());
        return w;
    }

    Status submitOneFill(long event) {
        try {
            carol.exec.submit(SubmitRequest.newBuilder().setSession(session)
                    .addCommands(GateKernel.fill(event, buffer, 1)).build());
            return Status.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        }
    }

    @Test
    void writesInProgressHoldPlacesUntilTheyAnswerOrAreCancelled() throws Exception {
        Answer<WriteBufferResponse> a1 = new Answer<>();
        Answer<WriteBufferResponse> a2 = new Answer<>();
        StreamObserver<WriteBufferRequest> w1 = startWrite(a1);
        StreamObserver<WriteBufferRequest> w2 = startWrite(a2);
        awaitValue(inFlight(), 2);

        Status refused = submitOneFill(1);
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, refused.getCode());
        assertEquals("tenant carol: in-flight commands quota 2 commands exceeded (in use 2, requested 1)",
                refused.getDescription());
        Answer<WriteBufferResponse> a3 = new Answer<>();
        startWrite(a3);
        Status third = a3.status();
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, third.getCode());
        assertTrue(third.getDescription().startsWith("tenant carol: in-flight commands quota 2 commands exceeded by this "
                + "WriteBuffer call (in use 2"), third.getDescription());

        w1.onCompleted(); // answered: its place is free
        assertEquals(Status.OK, a1.status());
        assertEquals(16, a1.value.get().getBytesWritten());
        awaitValue(inFlight(), 1);
        ((ClientCallStreamObserver<WriteBufferRequest>) w2).cancel("the client gives up", null); // cancelled: free too
        awaitValue(inFlight(), 0);
        assertEquals(Status.Code.CANCELLED, a2.status().getCode());
        assertEquals(Status.OK, submitOneFill(1));
    }

    @Test
    void aReadInProgressHoldsAPlaceUntilItsDataIsSent() throws Exception {
        GateKernel gate = new GateKernel(dir);
        long kernel = gate.compile(KernelServiceGrpc.newBlockingStub(carol.channel), session);
        long x = carol.buffers.createBuffer(Protos.f32(session, 1)).getBuffer().getBuffer();
        try {
            carol.exec.submit(SubmitRequest.newBuilder().setSession(session).addCommands(GateKernel.launch(1, kernel, x))
                    .build());
            gate.awaitStarted();
            // the read waits for the gate: in progress, with the gate, two places
            Answer<ReadBufferResponse> read = new Answer<>();
            buffersAsync.readBuffer(ReadBufferRequest.newBuilder().setSession(session).setBuffer(buffer).addWaitEvents(1)
                    .build(), read);
            awaitValue(inFlight(), 2);
            Status refused = submitOneFill(2);
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, refused.getCode(), refused::toString);
            gate.open();
            assertEquals(Status.OK, read.status());
            assertEquals(64, read.value.get().getData().size());
            awaitValue(inFlight(), 0);
            assertEquals(Status.OK, submitOneFill(2));
            carol.exec.waitEvents(WaitEventsRequest.newBuilder().setSession(session).addEvents(2).build());
        } finally {
            gate.open();
        }
    }

    @Test
    void aCancelledReadCancelsItsDownloadAndGivesItsPlaceBack() throws Exception {
        GateKernel gate = new GateKernel(dir);
        long kernel = gate.compile(KernelServiceGrpc.newBlockingStub(carol.channel), session);
        long x = carol.buffers.createBuffer(Protos.f32(session, 1)).getBuffer().getBuffer();
        try {
            carol.exec.submit(SubmitRequest.newBuilder().setSession(session).addCommands(GateKernel.launch(1, kernel, x))
                    .build());
            gate.awaitStarted();
            io.grpc.Context.CancellableContext call = io.grpc.Context.current().withCancellation();
            Answer<ReadBufferResponse> read = new Answer<>();
            call.run(() -> buffersAsync.readBuffer(ReadBufferRequest.newBuilder().setSession(session)
                    .setBuffer(buffer).addWaitEvents(1).build(), read));
            awaitValue(inFlight(), 2);
            call.cancel(null);
            assertEquals(Status.Code.CANCELLED, read.status().getCode());
            gate.open();
            awaitValue(inFlight(), 0); // the download, cancelled, never ran; the gate finished
            assertEquals(Status.OK, submitOneFill(2));
        } finally {
            gate.open();
        }
    }
}
