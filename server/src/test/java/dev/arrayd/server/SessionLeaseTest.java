package dev.arrayd.server;

import static dev.arrayd.server.Protos.f32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.proto.v1.CloseSessionRequest;
import dev.arrayd.proto.v1.CreateStreamRequest;
import dev.arrayd.proto.v1.DescribeBufferRequest;
import dev.arrayd.proto.v1.EventState;
import dev.arrayd.proto.v1.KeepAliveRequest;
import dev.arrayd.proto.v1.KernelServiceGrpc;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.WaitEventsRequest;
import dev.arrayd.proto.v1.WaitEventsResponse;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Leases are enforced: a session not renewed for its lease is reclaimed with all it held, and a call in progress
 * keeps its session (fake clock).
 */
class SessionLeaseTest {

    TenantFixture f;
    TenantFixture.Client bob;

    @BeforeEach
    void setUp() throws Exception {
        f = new TenantFixture();
        bob = f.client(TenantFixture.BOB);
    }

    @AfterEach
    void tearDown() throws Exception {
        f.close();
    }

    @Test
    void aSessionNotRenewedForItsLeaseIsReclaimedWithEverythingItHeld() {
        String s = bob.openSession(2_000);
        long b = bob.buffers.createBuffer(f32(s, 1 << 16)).getBuffer().getBuffer();
        bob.exec.createStream(CreateStreamRequest.newBuilder().setSession(s).build());
        assertTrue(f.usedBytes() > 0);
        f.clock.advance(1_999, TimeUnit.MILLISECONDS);
        assertEquals(0, f.sessions().reapExpired(), "within the lease");
        f.clock.advance(2, TimeUnit.MILLISECONDS);
        assertEquals(1, f.sessions().reapExpired(), "past the lease");
        f.assertPoolsEmpty();
        assertEquals(0, f.sessions().usageOf("bob").memoryBytes.get(), "memory counted back to the tenant");
        assertEquals(0, f.sessions().usageOf("bob").streams.get(), "streams counted back to the tenant");
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> bob.buffers.describeBuffer(
                DescribeBufferRequest.newBuilder().setSession(s).setBuffer(b).build()).getBuffer());
        assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
        assertEquals(1.0, f.server.metrics().registry().get("arrayd.sessions.reclaimed").counter().count());
    }

    @Test
    void keepAliveAndAnyCallRenewTheLease() {
        String s = bob.openSession(2_000);
        for (int i = 0; i < 5; i++) {
            f.clock.advance(1_500, TimeUnit.MILLISECONDS);
            if (i % 2 == 0) {
                bob.sessions.keepAlive(KeepAliveRequest.newBuilder().setSession(s).build());
            } else {
                bob.buffers.createBuffer(f32(s, 16)).getBuffer();
            }
            assertEquals(0, f.sessions().reapExpired());
        }
        f.clock.advance(2_001, TimeUnit.MILLISECONDS);
        assertEquals(1, f.sessions().reapExpired());
        f.assertPoolsEmpty();
    }

    @Test
    void explicitCloseFreesAtOnce() {
        String s = bob.openSession(60_000);
        bob.buffers.createBuffer(f32(s, 1 << 16)).getBuffer();
        bob.sessions.closeSession(CloseSessionRequest.newBuilder().setSession(s).build());
        f.assertPoolsEmpty();
        assertEquals(0, f.sessions().size());
        assertEquals(0, f.sessions().reapExpired());
    }

    @Test
    void aCallInProgressKeepsItsSessionAliveAndRenewsItWhenItEnds(@TempDir Path dir) throws Exception {
        String s = bob.openSession(1_000);
        GateKernel gate = new GateKernel(dir);
        long kernel = gate.compile(KernelServiceGrpc.newBlockingStub(bob.channel), s);
        long b = bob.buffers.createBuffer(f32(s, 4)).getBuffer().getBuffer();
        long event = bob.exec.submit(SubmitRequest.newBuilder().setSession(s).addCommands(GateKernel.launch(0, kernel, b))
                .build()).getEvents(0);
        CompletableFuture<WaitEventsResponse> waited = new CompletableFuture<>();
        bob.execAsync.waitEvents(WaitEventsRequest.newBuilder().setSession(s).addEvents(event).build(),
                new StreamObserver<>() {
                    private WaitEventsResponse answer;

                    @Override
                    public void onNext(WaitEventsResponse r) {
                        answer = r;
                    }

                    @Override
                    public void onError(Throwable t) {
                        waited.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        waited.complete(answer); // the call has ended: its status came after its answer
                    }
                });
        try {
            gate.awaitStarted();
            f.clock.advance(5_000, TimeUnit.MILLISECONDS);
            assertEquals(0, f.sessions().reapExpired(), "a WaitEvents naming the session is in progress");
        } finally {
            gate.open();
        }
        assertEquals(EventState.EVENT_STATE_SUCCEEDED, waited.get(30, TimeUnit.SECONDS).getCompletions(0).getState());
        f.clock.advance(900, TimeUnit.MILLISECONDS);
        assertEquals(0, f.sessions().reapExpired(), "the end of the call renewed the lease");
        f.clock.advance(200, TimeUnit.MILLISECONDS);
        assertEquals(1, f.sessions().reapExpired(), "a lease past its end without a call");
        f.assertPoolsEmpty();
    }
}
