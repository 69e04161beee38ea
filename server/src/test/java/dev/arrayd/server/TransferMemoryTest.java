package dev.arrayd.server;

import static dev.arrayd.server.Protos.f32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.proto.v1.BufferInfo;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CommandBatch;
import dev.arrayd.proto.v1.Download;
import dev.arrayd.proto.v1.EventCompletion;
import dev.arrayd.proto.v1.EventState;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.ExecuteResponse;
import dev.arrayd.proto.v1.ReadBufferRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The daemon's transfer-memory: a batch of inline uploads or downloads, or a ReadBuffer call, that would hold more of
 * the heap is refused, and every transfer gives back what it held once it ran (an upload), its data was sent or its
 * command failed (a download), or its call ended (the fixture checks after every server test that nothing is still
 * held).
 */
class TransferMemoryTest {

    static final long BUDGET = 1 << 20;
    static final int QUARTER = (int) (BUDGET / 4); // bytes of the test's buffer

    ServerFixture f;
    String session;
    BufferInfo buffer;
    SessionStreamProbe stream;
    long nextEvent = 1;

    @BeforeEach
    void setUp() throws Exception {
        f = new ServerFixture(ServerOptions.defaults().withPort(0).withCpuMemoryBytes(256L << 20)
                .withTransferMemoryBytes(BUDGET));
        session = f.openSession();
        buffer = f.buffers.createBuffer(f32(session, QUARTER / 4)).getBuffer();
        stream = new SessionStreamProbe(f.execAsync);
        stream.attach(session);
    }

    @AfterEach
    void tearDown() throws Exception {
        stream.close();
        f.close();
    }

    private ExecuteResponse next() throws InterruptedException {
        return stream.next();
    }

    /** A batch of {@code n} downloads of the whole buffer, each with {@code deadlineSeconds} (0: none). */
    private void downloads(long batchId, int n, long deadlineSeconds) {
        CommandBatch.Builder b = CommandBatch.newBuilder().setBatchId(batchId);
        for (int i = 0; i < n; i++) {
            Command.Builder c = Command.newBuilder().setEvent(nextEvent++)
                    .setDownload(Download.newBuilder().setBuffer(buffer.getBuffer()).setSizeBytes(QUARTER));
            if (deadlineSeconds > 0) {
                c.setDeadline(com.google.protobuf.Timestamp.newBuilder().setSeconds(deadlineSeconds));
            }
            b.addCommands(c);
        }
        stream.requests.onNext(ExecuteRequest.newBuilder().setBatch(b).build());
    }

    private List<EventCompletion> completions(int count) throws InterruptedException {
        return stream.completions(count);
    }

    @Test
    void aBatchOfDownloadsOverTheBudgetIsRefusedAndDownloadsThatWereSentGiveTheirsBack() throws Exception {
        downloads(1, 5, 0); // 1.25 MiB
        ExecuteResponse r = next();
        assertEquals(1, r.getRejected().getBatchId(), r.toString());
        assertEquals(Status.Code.RESOURCE_EXHAUSTED.value(), r.getRejected().getCode());
        assertTrue(r.getRejected().getMessage().contains("batch: " + 5 * QUARTER + " bytes of transfer data")
                && r.getRejected().getMessage().contains("transfer-memory of " + BUDGET), r.getRejected().getMessage());
        // the whole budget, again and again: each batch fits only once the one before gave back what it held
        for (int round = 0; round < 20; round++) {
            downloads(2 + round, 4, 0);
            List<EventCompletion> done = completions(4);
            assertTrue(done.stream().allMatch(e -> e.getState() == EventState.EVENT_STATE_SUCCEEDED
                    && e.getData().size() == QUARTER), done::toString);
        }
    }

    @Test
    void aBatchOfUploadsOverTheBudgetIsRefusedAndUploadsThatRanGiveTheirsBack() throws Exception {
        com.google.protobuf.ByteString data = com.google.protobuf.ByteString.copyFrom(new byte[QUARTER]);
        for (int round = 0; round < 21; round++) {
            int n = round == 0 ? 5 : 4; // 1.25 MiB first, then the whole budget again and again
            CommandBatch.Builder b = CommandBatch.newBuilder().setBatchId(1 + round);
            for (int i = 0; i < n; i++) {
                b.addCommands(Command.newBuilder().setEvent(nextEvent++).setUpload(dev.arrayd.proto.v1.Upload
                        .newBuilder().setBuffer(buffer.getBuffer()).setData(data)));
            }
            stream.requests.onNext(ExecuteRequest.newBuilder().setBatch(b).build());
            if (round == 0) {
                ExecuteResponse r = next();
                assertEquals(Status.Code.RESOURCE_EXHAUSTED.value(), r.getRejected().getCode(), r.toString());
                continue;
            }
            List<EventCompletion> done = completions(4);
            assertTrue(done.stream().allMatch(e -> e.getState() == EventState.EVENT_STATE_SUCCEEDED), done::toString);
        }
    }

    @Test
    void aUnarySubmitOfUploadsOverTheBudgetIsRefusedAndOneWithinGivesItsBackOnceItsCommandsAreDone() throws Exception {
        com.google.protobuf.ByteString data = com.google.protobuf.ByteString.copyFrom(new byte[QUARTER]);
        for (int round = 0; round < 21; round++) {
            int n = round == 0 ? 5 : 4;
            var req = dev.arrayd.proto.v1.SubmitRequest.newBuilder().setSession(session);
            for (int i = 0; i < n; i++) {
                req.addCommands(Command.newBuilder().setUpload(dev.arrayd.proto.v1.Upload.newBuilder()
                        .setBuffer(buffer.getBuffer()).setData(data)));
            }
            if (round == 0) {
                StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> f.exec.submit(req.build()));
                assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
                assertTrue(e.getStatus().getDescription().startsWith("Submit: " + 5 * QUARTER + " bytes of transfer data"),
                        e.getStatus().getDescription());
                continue;
            }
            var events = f.exec.submit(req.build()).getEventsList();
            var waited = f.exec.waitEvents(dev.arrayd.proto.v1.WaitEventsRequest.newBuilder().setSession(session)
                    .addAllEvents(events).build());
            assertTrue(waited.getCompletionsList().stream()
                    .allMatch(c -> c.getState() == EventState.EVENT_STATE_SUCCEEDED), waited::toString);
        }
    }

    @Test
    void aWriteBufferOverTheBudgetIsRefusedAndOneWithinGivesItsBackWhenItEnds() throws Exception {
        BufferInfo large = f.buffers.createBuffer(f32(session, 2 * BUDGET / 4)).getBuffer();
        com.google.protobuf.ByteString data = com.google.protobuf.ByteString.copyFrom(new byte[QUARTER]);
        for (int round = 0; round < 11; round++) {
            int n = round == 0 ? 5 : 4;
            var answer = new java.util.concurrent.CompletableFuture<dev.arrayd.proto.v1.WriteBufferResponse>();
            var call = f.buffersAsync.writeBuffer(new io.grpc.stub.StreamObserver<>() {
                @Override
                public void onNext(dev.arrayd.proto.v1.WriteBufferResponse r) {
                    answer.complete(r);
                }

                @Override
                public void onError(Throwable t) {
                    answer.completeExceptionally(t);
                }

                @Override
                public void onCompleted() {}
            });
            for (int i = 0; i < n; i++) {
                call.onNext(dev.arrayd.proto.v1.WriteBufferRequest.newBuilder().setSession(session)
                        .setBuffer(large.getBuffer()).setOffsetBytes((long) i * QUARTER).setData(data).build());
            }
            call.onCompleted();
            if (round == 0) {
                var e = assertThrows(java.util.concurrent.ExecutionException.class,
                        () -> answer.get(10, java.util.concurrent.TimeUnit.SECONDS));
                Status s = Status.fromThrowable(e.getCause());
                assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getCode());
                assertTrue(s.getDescription().startsWith("WriteBuffer: " + QUARTER + " bytes of transfer data"),
                        s.getDescription());
                continue;
            }
            assertEquals(BUDGET, answer.get(10, java.util.concurrent.TimeUnit.SECONDS).getBytesWritten());
        }
    }

    @Test
    void aGraphsUploadsHoldTheirsUntilTheGraphIsDestroyedOrItsSessionCloses() {
        com.google.protobuf.ByteString data = com.google.protobuf.ByteString.copyFrom(new byte[QUARTER]);
        for (int round = 0; round < 12; round++) {
            int n = round == 0 ? 5 : 4;
            var req = dev.arrayd.proto.v1.RecordGraphRequest.newBuilder().setSession(session);
            for (int i = 0; i < n; i++) {
                req.addCommands(Command.newBuilder().setEvent(i + 1).setUpload(dev.arrayd.proto.v1.Upload.newBuilder()
                        .setBuffer(buffer.getBuffer()).setData(data)));
            }
            if (round == 0) {
                StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> f.exec.recordGraph(req.build()));
                assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
                assertTrue(e.getStatus().getDescription().startsWith("RecordGraph: " + 5 * QUARTER), e.getStatus().getDescription());
                continue;
            }
            long graph = f.exec.recordGraph(req.build()).getGraph();
            if (round < 11) { // the last one stays: its session's close gives it back (the fixture checks)
                f.exec.destroyGraph(dev.arrayd.proto.v1.DestroyGraphRequest.newBuilder().setSession(session)
                        .setGraph(graph).build());
            }
        }
    }

    @Test
    void downloadsThatFailGiveTheirsBack() throws Exception {
        for (int round = 0; round < 20; round++) {
            downloads(1 + round, 4, 1); // a deadline long passed: each fails instead of running
            List<EventCompletion> done = completions(4);
            assertTrue(done.stream().allMatch(e -> e.getState() == EventState.EVENT_STATE_FAILED), done::toString);
        }
        downloads(100, 4, 0);
        assertTrue(completions(4).stream().allMatch(e -> e.getState() == EventState.EVENT_STATE_SUCCEEDED));
    }

    @Test
    void aReadBufferOverTheBudgetIsRefusedAndOneWithinGivesItsBackWhenItEnds() {
        BufferInfo large = f.buffers.createBuffer(f32(session, 2 * BUDGET / 4)).getBuffer();
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> f.buffers.readBuffer(
                ReadBufferRequest.newBuilder().setSession(session).setBuffer(large.getBuffer()).build()).forEachRemaining(x -> { }));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().startsWith("ReadBuffer: " + 2 * BUDGET + " bytes of transfer data"),
                e.getStatus().getDescription());
        for (int round = 0; round < 10; round++) {
            long[] got = {0};
            f.buffers.readBuffer(ReadBufferRequest.newBuilder().setSession(session).setBuffer(large.getBuffer())
                    .setSizeBytes(BUDGET).build()).forEachRemaining(x -> got[0] += x.getData().size());
            assertEquals(BUDGET, got[0]);
        }
    }
}
