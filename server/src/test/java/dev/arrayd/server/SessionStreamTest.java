package dev.arrayd.server;

import static dev.arrayd.server.Protos.buf;
import static dev.arrayd.server.Protos.f32;
import static dev.arrayd.server.Protos.i32;
import static dev.arrayd.server.Protos.launch;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.arrayd.proto.v1.Attach;
import dev.arrayd.proto.v1.BufferInfo;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.Download;
import dev.arrayd.proto.v1.EventCompletion;
import dev.arrayd.proto.v1.EventState;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.ExecuteResponse;
import dev.arrayd.proto.v1.Ping;
import dev.arrayd.proto.v1.Upload;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The session stream protocol against the real server, scheduler and CPU backend. */
class SessionStreamTest {

    ServerFixture f;
    String session;
    long vadd;
    SessionStreamProbe probe;
    LinkedBlockingQueue<ExecuteResponse> responses;
    CompletableFuture<Status> ended;
    StreamObserver<ExecuteRequest> requests;

    @BeforeEach
    void setUp() throws Exception {
        f = new ServerFixture(true);
        session = f.openSession();
        vadd = f.kernels.compile(Protos.compile(session, Protos.VADD, Protos.VADD_SIG)).getModules(0).getKernels(0).getKernel();
        probe = new SessionStreamProbe(f.execAsync);
        responses = probe.responses;
        ended = probe.ended;
        requests = probe.requests;
    }

    @AfterEach
    void tearDown() throws Exception {
        requests.onCompleted();
        ended.get(10, TimeUnit.SECONDS);
        f.close();
    }

    private ExecuteResponse next() throws InterruptedException {
        return probe.next();
    }

    private void attach() throws InterruptedException {
        probe.attach(session);
    }

    private void send(long batchId, Command... cmds) {
        probe.send(batchId, cmds);
    }

    /** Collects completions until every listed event has been answered. */
    private List<EventCompletion> completions(int count) throws InterruptedException {
        return probe.completions(count);
    }

    private static ByteString floats(float... v) {
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) {
            b.putFloat(x);
        }
        return ByteString.copyFrom(b.array());
    }

    @Test
    void aShutdownEndsTheStreamAndLaterCallsOnItsSessionWithUnavailableSayingSo() throws Exception {
        attach();
        BufferInfo x = f.buffers.createBuffer(f32(session, 4)).getBuffer();
        send(1, Command.newBuilder().setEvent(1).setFill(dev.arrayd.proto.v1.Fill.newBuilder().setBuffer(x.getBuffer())
                .setValue(dev.arrayd.proto.v1.Scalar.newBuilder().setF32(1))).build());
        assertEquals(EventState.EVENT_STATE_SUCCEEDED, completions(1).get(0).getState());
        // what the shutdown does before it stops the gRPC server: refuse new work, close every session
        var scheduler = f.server.scheduler();
        scheduler.beginShutdown();
        scheduler.closeSession(f.server.sessions().find(session).session);

        Status end = ended.get(10, TimeUnit.SECONDS);
        assertEquals(Status.Code.UNAVAILABLE, end.getCode(), end.toString());
        assertTrue(end.getDescription().startsWith("arrayd is shutting down"), end.toString());
        for (Runnable call : List.<Runnable>of(
                () -> f.sessions.keepAlive(dev.arrayd.proto.v1.KeepAliveRequest.newBuilder().setSession(session).build()),
                () -> f.sessions.closeSession(dev.arrayd.proto.v1.CloseSessionRequest.newBuilder().setSession(session).build()),
                () -> f.buffers.describeBuffer(dev.arrayd.proto.v1.DescribeBufferRequest.newBuilder().setSession(session)
                        .setBuffer(x.getBuffer()).build()))) {
            Status s = Status.fromThrowable(org.junit.jupiter.api.Assertions.assertThrows(
                    io.grpc.StatusRuntimeException.class, call::run));
            assertEquals(Status.Code.UNAVAILABLE, s.getCode(), s.toString());
            assertTrue(s.getDescription().startsWith("arrayd is shutting down"), s.toString());
        }
    }

    @Test
    void aBatchThatCompletesInlineIsAnsweredInOneMessage() throws Exception {
        attach();
        BufferInfo x = f.buffers.createBuffer(f32(session, 4)).getBuffer();
        Command[] fills = new Command[8];
        for (int i = 0; i < fills.length; i++) { // short data commands: the fast path runs them as they are submitted
            fills[i] = Command.newBuilder().setEvent(i + 1).setFill(dev.arrayd.proto.v1.Fill.newBuilder()
                    .setBuffer(x.getBuffer()).setValue(dev.arrayd.proto.v1.Scalar.newBuilder().setF32(i))).build();
        }
        send(1, fills);
        ExecuteResponse r = next();
        assertEquals(8, r.getCompletions().getCompletionsCount(), "one message for the whole batch: " + r);
        assertTrue(responses.isEmpty(), responses::toString);
    }

    /** Events 1-4 on three new 4-float buffers: upload a, upload b, c = vadd(a, b), download c (11, 22, 33, 44). */
    private Command[] uploadLaunchDownload() {
        BufferInfo a = f.buffers.createBuffer(f32(session, 4)).getBuffer();
        BufferInfo b = f.buffers.createBuffer(f32(session, 4)).getBuffer();
        BufferInfo c = f.buffers.createBuffer(f32(session, 4)).getBuffer();
        return new Command[] {
            Command.newBuilder().setEvent(1).setUpload(Upload.newBuilder().setBuffer(a.getBuffer()).setData(floats(1, 2, 3, 4))).build(),
            Command.newBuilder().setEvent(2).setUpload(Upload.newBuilder().setBuffer(b.getBuffer()).setData(floats(10, 20, 30, 40))).build(),
            launch(3, vadd, 4, buf(a.getBuffer()), buf(b.getBuffer()), buf(c.getBuffer()), i32(4)),
            Command.newBuilder().setEvent(4).setDownload(Download.newBuilder().setBuffer(c.getBuffer())).build()};
    }

    @Test
    void uploadLaunchDownloadInOneBatchAreOrderedByHazards() throws Exception {
        attach();
        send(1, uploadLaunchDownload());
        List<EventCompletion> done = completions(4);
        EventCompletion down = done.stream().filter(e -> e.getEvent() == 4).findFirst().orElseThrow();
        assertEquals(EventState.EVENT_STATE_SUCCEEDED, down.getState(), down.toString());
        assertEquals(floats(11, 22, 33, 44), down.getData());
        assertTrue(done.stream().allMatch(e -> e.getState() == EventState.EVENT_STATE_SUCCEEDED), done.toString());
    }

    @Test
    void withPackedSuccessesOnlyDownloadsAndFailuresComeAsCompletions() throws Exception {
        requests.onNext(ExecuteRequest.newBuilder().setAttach(Attach.newBuilder().setSession(session)
                .setPackedSuccesses(true)).build());
        assertEquals(session, next().getAttached().getSession());
        Command[] program = uploadLaunchDownload();
        send(1, program[0], program[1], program[2], program[3],
                program[2].toBuilder().setEvent(5) // the launch again, with a deadline long passed
                        .setDeadline(com.google.protobuf.Timestamp.newBuilder().setSeconds(1)).build());
        List<Long> succeeded = new ArrayList<>();
        List<Long> nanos = new ArrayList<>();
        List<EventCompletion> completions = new ArrayList<>();
        while (succeeded.size() + completions.size() < 5) {
            ExecuteResponse r = next();
            assertTrue(r.hasCompletions(), r.toString());
            succeeded.addAll(r.getCompletions().getSucceededList());
            nanos.addAll(r.getCompletions().getSucceededDeviceNanosList());
            completions.addAll(r.getCompletions().getCompletionsList());
        }
        assertEquals(List.of(1L, 2L, 3L), succeeded.stream().sorted().toList(), "the commands that return no data");
        assertEquals(succeeded.size(), nanos.size(), "a device time for each");
        assertTrue(nanos.stream().allMatch(n -> n >= 0), nanos::toString);
        EventCompletion down = completions.stream().filter(e -> e.getEvent() == 4).findFirst().orElseThrow();
        assertEquals(floats(11, 22, 33, 44), down.getData());
        assertTrue(down.hasDeviceTime(), down.toString());
        EventCompletion failed = completions.stream().filter(e -> e.getEvent() == 5).findFirst().orElseThrow();
        assertEquals(EventState.EVENT_STATE_FAILED, failed.getState(), failed.toString());
        assertEquals(2, completions.size(), completions::toString);
    }

    @Test
    void aBadCommandRejectsItsWholeBatchAndTheStreamGoesOn() throws Exception {
        attach();
        BufferInfo a = f.buffers.createBuffer(f32(session, 4)).getBuffer();
        send(7,
                Command.newBuilder().setEvent(1).setUpload(Upload.newBuilder().setBuffer(a.getBuffer()).setData(floats(1, 2, 3, 4))).build(),
                launch(2, vadd, 4, buf(a.getBuffer()), buf(a.getBuffer())));
        ExecuteResponse r = next();
        assertEquals(7, r.getRejected().getBatchId());
        assertEquals(Status.Code.INVALID_ARGUMENT.value(), r.getRejected().getCode());
        assertTrue(r.getRejected().getMessage().startsWith("commands[1]: launch.args: 2 given"), r.getRejected().getMessage());
        // nothing of the rejected batch was registered: its ids are free, and the stream still works
        send(8, Command.newBuilder().setEvent(1).setDownload(Download.newBuilder().setBuffer(a.getBuffer())).build());
        assertEquals(EventState.EVENT_STATE_SUCCEEDED, completions(1).getFirst().getState());
        send(9, Command.newBuilder().setEvent(1).setDownload(Download.newBuilder().setBuffer(a.getBuffer())).build());
        assertEquals(Status.Code.ALREADY_EXISTS.value(), next().getRejected().getCode());
        send(10, Command.newBuilder().setDownload(Download.newBuilder().setBuffer(a.getBuffer())).build());
        assertTrue(next().getRejected().getMessage().contains("event: 0 (expected: a client-chosen id >= 1"));
    }

    @Test
    void pingIsAnswered() throws Exception {
        attach();
        requests.onNext(ExecuteRequest.newBuilder().setPing(Ping.newBuilder().setNonce(42)).build());
        assertEquals(42, next().getPong().getNonce());
    }

    @Test
    void halfCloseFinishesInFlightCompletionsFirst() throws Exception {
        attach();
        BufferInfo big = f.buffers.createBuffer(f32(session, 1 << 22)).getBuffer();
        List<Command> cmds = new ArrayList<>();
        for (int i = 1; i <= 50; i++) {
            cmds.add(Command.newBuilder().setEvent(i).setFill(dev.arrayd.proto.v1.Fill.newBuilder().setBuffer(big.getBuffer())
                    .setValue(dev.arrayd.proto.v1.Scalar.newBuilder().setF32(i))).build());
        }
        send(1, cmds.toArray(Command[]::new));
        requests.onCompleted();
        assertEquals(Status.OK, ended.get(30, TimeUnit.SECONDS));
        int answered = 0;
        for (ExecuteResponse r : responses) {
            answered += r.getCompletions().getCompletionsCount();
        }
        assertEquals(50, answered, "every command answered before the stream ended");
        requests = new NoopObserver();
    }

    @Test
    void batchBeforeAttachAndUnknownSessionEndTheStream() throws Exception {
        send(1, Command.newBuilder().setEvent(1).setDownload(Download.newBuilder().setBuffer(1)).build());
        Status s = ended.get(10, TimeUnit.SECONDS);
        assertEquals(Status.Code.FAILED_PRECONDITION, s.getCode());
        assertTrue(s.getDescription().contains("send attach first"), s.toString());
        requests = new NoopObserver();

        SessionStreamProbe other = new SessionStreamProbe(f.execAsync);
        other.requests.onNext(ExecuteRequest.newBuilder().setAttach(Attach.newBuilder().setSession("no-such-session"))
                .build());
        assertEquals(Status.Code.NOT_FOUND, other.ended.get(10, TimeUnit.SECONDS).getCode());
    }

    private void attachLingering(int micros) throws InterruptedException {
        requests.onNext(ExecuteRequest.newBuilder().setAttach(Attach.newBuilder().setSession(session)
                .setCompletionLingerUs(micros)).build());
        assertEquals(session, next().getAttached().getSession());
    }

    private Command fill(long event, long stream, BufferInfo b) {
        return Command.newBuilder().setEvent(event).setStream(stream).setFill(dev.arrayd.proto.v1.Fill.newBuilder()
                .setBuffer(b.getBuffer()).setValue(dev.arrayd.proto.v1.Scalar.newBuilder().setF32(event))).build();
    }

    @Test
    void aLingeringCompletionWaitsForTheLingerOrTheLastInFlight() throws Exception {
        attachLingering(10_000);
        long s1 = f.exec.createStream(dev.arrayd.proto.v1.CreateStreamRequest.newBuilder().setSession(session).build())
                .getStream();
        BufferInfo big = f.buffers.createBuffer(f32(session, 16 << 20)).getBuffer();
        BufferInfo small = f.buffers.createBuffer(f32(session, 256 << 10)).getBuffer();
        // both too long for the fast path: they run on the stream's worker and complete off the transport thread
        // their memory touched once, one at a time: a command alone in flight arms no linger
        send(1, fill(1, s1, small));
        completions(1);
        send(2, fill(2, s1, big));
        completions(1);
        long sent = System.nanoTime();
        send(3, fill(3, s1, small), fill(4, s1, big));
        List<EventCompletion> first = next().getCompletions().getCompletionsList();
        long firstAfter = System.nanoTime() - sent;
        // the small fill ends first, and the big one runs after it for milliseconds; meanwhile the small one's
        // completion waits the whole linger (10 ms), unless the big one ends first and takes it along
        assertTrue(first.size() == 2 || firstAfter >= 10_000_000L,
                "the small fill's completion alone after " + firstAfter / 1000 + " µs: " + first);
        if (first.size() == 1) {
            assertEquals(3, first.getFirst().getEvent());
            assertEquals(4, completions(1).getFirst().getEvent());
        }
        // the last command in flight does not wait: ten round trips, each one a fill off the fast path
        long t0 = System.nanoTime();
        for (int i = 0; i < 10; i++) {
            send(10 + i, fill(10 + i, s1, small));
            assertEquals(10 + i, completions(1).getFirst().getEvent());
        }
        long tenTrips = System.nanoTime() - t0;
        assertTrue(tenTrips < 100_000_000L, "ten round trips of the last command in flight took " + tenTrips / 1000
                + " µs: at least one waited the linger");
    }

    @Test
    void aLingerBeyondTenMillisecondsEndsTheStreamNamingIt() throws Exception {
        requests.onNext(ExecuteRequest.newBuilder().setAttach(Attach.newBuilder().setSession(session)
                .setCompletionLingerUs(10_001)).build());
        Status s = ended.get(10, TimeUnit.SECONDS);
        assertEquals(Status.Code.INVALID_ARGUMENT, s.getCode());
        assertEquals("attach.completion_linger_us: 10001 (expected: 0 to 10000)", s.getDescription());
        requests = new NoopObserver();
    }

    /** Stands in for a stream that already ended, so tearDown has nothing to close. */
    private final class NoopObserver implements StreamObserver<ExecuteRequest> {
        NoopObserver() {
            ended.complete(Status.OK);
        }

        @Override
        public void onNext(ExecuteRequest value) {}

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
    }
}
