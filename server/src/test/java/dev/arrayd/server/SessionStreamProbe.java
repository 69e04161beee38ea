package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.proto.v1.Attach;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CommandBatch;
import dev.arrayd.proto.v1.EventCompletion;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.ExecuteResponse;
import dev.arrayd.proto.v1.ExecutionServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A session stream of a test's daemon that the test writes to and reads from. */
final class SessionStreamProbe {

    final LinkedBlockingQueue<ExecuteResponse> responses = new LinkedBlockingQueue<>();
    /** How the call ended: OK, or the status it failed with. */
    final CompletableFuture<Status> ended = new CompletableFuture<>();
    final StreamObserver<ExecuteRequest> requests;

    SessionStreamProbe(ExecutionServiceGrpc.ExecutionServiceStub exec) {
        requests = exec.execute(new StreamObserver<>() {
            @Override
            public void onNext(ExecuteResponse r) {
                responses.add(r);
            }

            @Override
            public void onError(Throwable t) {
                ended.complete(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                ended.complete(Status.OK);
            }
        });
    }

    /** The next response (fails the test after 10 s without one). */
    ExecuteResponse next() throws InterruptedException {
        ExecuteResponse r = responses.poll(10, TimeUnit.SECONDS);
        if (r == null) {
            throw new AssertionError("no response within 10 s");
        }
        return r;
    }

    void attach(String session) throws InterruptedException {
        requests.onNext(ExecuteRequest.newBuilder().setAttach(Attach.newBuilder().setSession(session)).build());
        assertEquals(session, next().getAttached().getSession());
    }

    void send(long batchId, Command... cmds) {
        CommandBatch.Builder b = CommandBatch.newBuilder().setBatchId(batchId);
        for (Command c : cmds) {
            b.addCommands(c);
        }
        requests.onNext(ExecuteRequest.newBuilder().setBatch(b).build());
    }

    /** Collects completions until {@code count} have come. */
    List<EventCompletion> completions(int count) throws InterruptedException {
        List<EventCompletion> out = new ArrayList<>();
        while (out.size() < count) {
            ExecuteResponse r = next();
            assertTrue(r.hasCompletions(), r.toString());
            out.addAll(r.getCompletions().getCompletionsList());
        }
        return out;
    }

    /** Half-closes the stream and waits for its end. */
    void close() throws Exception {
        requests.onCompleted();
        ended.get(10, TimeUnit.SECONDS);
    }
}
