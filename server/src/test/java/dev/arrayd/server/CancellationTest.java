package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.util.Durations;
import com.google.protobuf.util.Timestamps;
import dev.arrayd.proto.v1.Attach;
import dev.arrayd.proto.v1.BufferServiceGrpc;
import dev.arrayd.proto.v1.CloseSessionRequest;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CommandBatch;
import dev.arrayd.proto.v1.EventCompletion;
import dev.arrayd.proto.v1.EventState;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.ExecuteResponse;
import dev.arrayd.proto.v1.ExecutionServiceGrpc;
import dev.arrayd.proto.v1.KeepAliveRequest;
import dev.arrayd.proto.v1.KernelServiceGrpc;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.WaitEventsRequest;
import dev.arrayd.scheduler.Event;
import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.scheduler.Session;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cancellation end to end, with real clients over TCP: closing or reclaiming a session, a unary
 * call's deadline and a cancelled session stream each cancel the commands they leave behind. A
 * {@link GateKernel} holds the device while the test acts, so no step depends on timing.
 */
@Timeout(120)
class CancellationTest {

    @TempDir
    Path dir;
    final FakeClock clock = new FakeClock(); // leases move only when the test says (no reaper thread)
    ArraydServer server;
    ManagedChannel channel;
    SessionServiceGrpc.SessionServiceBlockingStub sessions;
    BufferServiceGrpc.BufferServiceBlockingStub buffers;
    ExecutionServiceGrpc.ExecutionServiceBlockingStub exec;
    GateKernel gate;
    String session;
    long kernel;
    long x;
    long y;

    @BeforeEach
    void start() throws Exception {
        server = new ArraydServer(ServerOptions.defaults().withPort(0).withMetricsPort(-1).withAllowNativeSource(true)
                .withCpuMemoryBytes(64L << 20), SecurityOptions.NONE, clock, null);
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
        sessions = SessionServiceGrpc.newBlockingStub(channel);
        buffers = BufferServiceGrpc.newBlockingStub(channel);
        exec = ExecutionServiceGrpc.newBlockingStub(channel);
        gate = new GateKernel(dir);
        session = sessions.openSession(OpenSessionRequest.newBuilder().setClientName("cancel").setLease(Durations.fromMillis(1_000))
                .build()).getSession();
        x = buffers.createBuffer(Protos.f32(session, 1)).getBuffer().getBuffer();
        y = buffers.createBuffer(Protos.f32(session, 4)).getBuffer().getBuffer();
        kernel = gate.compile(KernelServiceGrpc.newBlockingStub(channel), session);
    }

    @AfterEach
    void stop() throws Exception {
        gate.open();
        Scheduler sch = server.scheduler();
        for (Session s : List.copyOf(sch.sessions())) {
            sch.closeSession(s);
        }
        assertTrue(eventually(() -> sch.devices().stream().allMatch(d -> d.pool().usedBytes() == 0)),
                "every buffer freed once the cancelled commands settled");
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.close();
    }

    /** The gate on the default stream, then two fills of y that wait for it (stream order). */
    List<Command> gatedWork() {
        return List.of(GateKernel.launch(1, kernel, x), GateKernel.fill(2, y, 7), GateKernel.fill(3, y, 8));
    }

    static void assertCancelled(EventCompletion c, String why) {
        assertEquals(EventState.EVENT_STATE_FAILED, c.getState(), () -> "event " + c.getEvent() + ": " + c);
        assertEquals(Status.Code.CANCELLED.value(), c.getCode(), () -> "event " + c.getEvent() + ": " + c);
        assertTrue(c.getMessage().contains(why), () -> "event " + c.getEvent() + ": \"" + c.getMessage()
                + "\" (expected it to say: " + why + ")");
    }

    static boolean eventually(BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
        return true;
    }

    float[] readY() {
        ByteString data = buffers.readBuffer(ReadBufferRequest.newBuilder().setSession(session).setBuffer(y).build())
                .next().getData();
        float[] v = new float[4];
        data.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(v);
        return v;
    }

    /** A session stream whose completions and end the test reads. */
    final class Stream implements ClientResponseObserver<ExecuteRequest, ExecuteResponse> {
        final Map<Long, EventCompletion> completions = new ConcurrentHashMap<>();
        final CompletableFuture<Status> end = new CompletableFuture<>();
        ClientCallStreamObserver<ExecuteRequest> requests;

        Stream() {
            ExecutionServiceGrpc.newStub(channel).execute(this);
            requests.onNext(ExecuteRequest.newBuilder().setAttach(Attach.newBuilder().setSession(session)).build());
        }

        void submit(List<Command> commands) {
            requests.onNext(ExecuteRequest.newBuilder().setBatch(CommandBatch.newBuilder().setBatchId(1)
                    .addAllCommands(commands)).build());
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<ExecuteRequest> r) {
            requests = r;
        }

        @Override
        public void onNext(ExecuteResponse r) {
            r.getCompletions().getCompletionsList().forEach(c -> completions.put(c.getEvent(), c));
        }

        @Override
        public void onError(Throwable t) {
            end.complete(Status.fromThrowable(t));
        }

        @Override
        public void onCompleted() {
            end.complete(Status.OK);
        }
    }

    @Test
    void closingASessionCancelsWhatItStillHadPending() throws Exception {
        Stream st = new Stream();
        st.submit(gatedWork());
        gate.awaitStarted(); // the batch was accepted, the gate is on the device, the fills wait for it
        sessions.closeSession(CloseSessionRequest.newBuilder().setSession(session).build());
        gate.open();
        assertEquals(Status.Code.OK, st.end.get(30, TimeUnit.SECONDS).getCode(), "the stream ends after reporting them");
        assertEquals(3, st.completions.size(), st.completions::toString);
        for (long e = 1; e <= 3; e++) {
            // the running gate finished on the device and its result was dropped; the fills never ran
            assertCancelled(st.completions.get(e), "was closed (CloseSession) before this command finished");
        }
    }

    @Test
    void aReclaimedSessionsPendingCommandsAreCancelled() throws Exception {
        var events = exec.submit(SubmitRequest.newBuilder().setSession(session).addAllCommands(gatedWork()).build())
                .getEventsList();
        gate.awaitStarted();
        Session s = server.scheduler().session(session);
        List<Event> pending = events.stream().map(id -> server.scheduler().event(s, id)).toList();
        clock.advance(1_001, TimeUnit.MILLISECONDS);
        assertEquals(1, server.sessions().reapExpired(), "the lease of 1000 ms ran out");
        gate.open();
        for (Event e : pending) {
            e.toFuture().get(30, TimeUnit.SECONDS);
            assertEquals(dev.arrayd.scheduler.EventState.FAILED, e.state(), e::toString);
            assertEquals(dev.arrayd.devices.api.ErrorCode.CANCELLED, e.failure().code());
            assertTrue(e.failure().getMessage().contains("was reclaimed (its lease of 1000 ms ran out)"),
                    e.failure().getMessage());
        }
    }

    @Test
    void cancellingTheSessionStreamCancelsTheSessionsQueuedCommands() throws Exception {
        Stream st = new Stream();
        st.submit(gatedWork());
        gate.awaitStarted();
        st.requests.cancel("the client gives up", null);
        assertEquals(Status.Code.CANCELLED, st.end.get(30, TimeUnit.SECONDS).getCode());
        SessionLease lease = server.sessions().find(session);
        assertTrue(eventually(() -> lease.liveStreams.get() == 0), "the daemon saw the cancel");
        gate.open();
        var done = exec.waitEvents(WaitEventsRequest.newBuilder().setSession(session).addEvents(1).addEvents(2)
                .addEvents(3).build()).getCompletionsList();
        for (EventCompletion c : done) {
            assertCancelled(c, "was cancelled before this command finished (by the client");
        }
        // the session itself stays open (a cancelled stream is not a closed session)
        sessions.keepAlive(KeepAliveRequest.newBuilder().setSession(session).build());
    }

    @Test
    void aHalfClosedSessionStreamFinishesItsCommands() throws Exception {
        Stream st = new Stream();
        st.submit(gatedWork());
        gate.awaitStarted();
        st.requests.onCompleted();
        gate.open();
        assertEquals(Status.Code.OK, st.end.get(30, TimeUnit.SECONDS).getCode());
        for (long e = 1; e <= 3; e++) {
            assertEquals(EventState.EVENT_STATE_SUCCEEDED, st.completions.get(e).getState(), st.completions.get(e)::toString);
        }
        assertEquals(List.of(8f, 8f, 8f, 8f), floats(readY()));
    }

    @Test
    void aSubmitCallsDeadlineBecomesTheDeadlineOfItsCommands() throws Exception {
        Deadline callDeadline = Deadline.after(500, TimeUnit.MILLISECONDS);
        long ownLater = System.currentTimeMillis() * 1_000_000L + TimeUnit.MINUTES.toNanos(10);
        List<Command> work = List.of(GateKernel.launch(1, kernel, x),
                GateKernel.fill(2, y, 7).toBuilder().setDeadline(Timestamps.fromNanos(ownLater)).build(), // the call's is earlier
                GateKernel.fill(3, y, 8));
        var events = exec.withDeadline(callDeadline).submit(SubmitRequest.newBuilder().setSession(session)
                .addAllCommands(work).build()).getEventsList();
        // The daemon received the call before it answered, with at most 500 ms left: its deadline is before
        // `passed` (the client's own may be a little earlier: the daemon counts from when the call arrived).
        long passed = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
        gate.awaitStarted();
        // the fills wait for the gate; let the call's deadline pass while they do
        for (long left; (left = passed - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(left);
        }
        gate.open();
        var done = exec.waitEvents(WaitEventsRequest.newBuilder().setSession(session).addAllEvents(events).build())
                .getCompletionsList();
        assertEquals(EventState.EVENT_STATE_SUCCEEDED, done.get(0).getState(), "the gate had started before the deadline");
        for (EventCompletion c : done.subList(1, 3)) {
            assertEquals(Status.Code.DEADLINE_EXCEEDED.value(), c.getCode(), c::toString);
            assertTrue(c.getMessage().contains("deadline passed") && c.getMessage().contains("before the command could run"),
                    c.getMessage());
        }
    }

    @Test
    void aSubmitWithoutADeadlineOrWithALongOneRunsItsCommands() throws Exception {
        exec.submit(SubmitRequest.newBuilder().setSession(session).addCommands(GateKernel.launch(1, kernel, x)).build());
        gate.awaitStarted();
        long ownEarlier = System.currentTimeMillis() * 1_000_000L - TimeUnit.SECONDS.toNanos(1);
        exec.withDeadlineAfter(60, TimeUnit.SECONDS).submit(SubmitRequest.newBuilder().setSession(session)
                .addCommands(GateKernel.fill(2, y, 5))
                .addCommands(GateKernel.fill(3, x, 9).toBuilder().setDeadline(Timestamps.fromNanos(ownEarlier))) // its own is earlier
                .build());
        gate.open();
        var done = exec.waitEvents(WaitEventsRequest.newBuilder().setSession(session).addEvents(1).addEvents(2)
                .addEvents(3).build()).getCompletionsList();
        assertEquals(EventState.EVENT_STATE_SUCCEEDED, done.get(0).getState(), done::toString);
        assertEquals(EventState.EVENT_STATE_SUCCEEDED, done.get(1).getState(), done::toString);
        assertEquals(Status.Code.DEADLINE_EXCEEDED.value(), done.get(2).getCode(), done::toString);
        assertEquals(List.of(5f, 5f, 5f, 5f), floats(readY()));
    }

    @Test
    void aWaitEventsDeadlineEndsTheWaitButNotTheCommands() throws Exception {
        exec.submit(SubmitRequest.newBuilder().setSession(session).addAllCommands(gatedWork()).build());
        gate.awaitStarted();
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> exec
                .withDeadlineAfter(50, TimeUnit.MILLISECONDS).waitEvents(WaitEventsRequest.newBuilder()
                        .setSession(session).addEvents(3).build()));
        assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());
        gate.open();
        var done = exec.waitEvents(WaitEventsRequest.newBuilder().setSession(session).addEvents(3).build())
                .getCompletions(0);
        assertEquals(EventState.EVENT_STATE_SUCCEEDED, done.getState(), done::toString);
        assertEquals(List.of(8f, 8f, 8f, 8f), floats(readY()));
    }

    static List<Float> floats(float[] v) {
        return List.of(v[0], v[1], v[2], v[3]);
    }
}
