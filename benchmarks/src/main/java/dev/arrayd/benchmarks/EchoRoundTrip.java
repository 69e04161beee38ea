package dev.arrayd.benchmarks;

import com.google.protobuf.ByteString;
import dev.arrayd.proto.v1.DiagnosticsServiceGrpc;
import dev.arrayd.proto.v1.EchoRequest;
import dev.arrayd.proto.v1.EchoResponse;
import io.grpc.Channel;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletableFuture;

/**
 * Round trips of one small message on a {@code DiagnosticsService.Echo} bidi stream, one in flight at a
 * time: the floor that any call on the same gRPC stack pays. Not thread-safe: one caller at a time.
 */
final class EchoRoundTrip implements RoundTrip, AutoCloseable {

    /** Payload size: about what a small command or completion weighs on the wire. */
    static final int PAYLOAD_BYTES = 16;

    private final ByteString payload = ByteString.copyFrom(new byte[PAYLOAD_BYTES]);
    private final StreamObserver<EchoRequest> requests;
    private final Responses responses = new Responses();
    private long seq;

    EchoRoundTrip(Channel channel) {
        this.requests = DiagnosticsServiceGrpc.newStub(channel).echo(responses);
    }

    @Override
    public CompletableFuture<EchoResponse> fire() {
        CompletableFuture<EchoResponse> f = new CompletableFuture<>();
        Throwable failed = responses.failure;
        if (failed != null) {
            f.completeExceptionally(failed);
            return f;
        }
        long s = ++seq;
        responses.expect(s, f);
        requests.onNext(EchoRequest.newBuilder().setSeq(s).setPayload(payload).build());
        return f;
    }

    @Override
    public void close() {
        requests.onCompleted();
    }

    /** Completes the one pending future on the transport thread. */
    private static final class Responses implements StreamObserver<EchoResponse> {
        private volatile CompletableFuture<EchoResponse> pending;
        private volatile long expected;
        private volatile Throwable failure;

        void expect(long seq, CompletableFuture<EchoResponse> f) {
            expected = seq;
            pending = f;
        }

        @Override
        public void onNext(EchoResponse m) {
            CompletableFuture<EchoResponse> f = pending;
            if (f == null) {
                return;
            }
            if (m.getSeq() == expected) {
                f.complete(m);
            } else {
                f.completeExceptionally(new IllegalStateException(
                        "echo seq: " + m.getSeq() + " (expected: " + expected + ")"));
            }
        }

        @Override
        public void onError(Throwable t) {
            failure = t;
            CompletableFuture<EchoResponse> f = pending;
            if (f != null) {
                f.completeExceptionally(t);
            }
        }

        @Override
        public void onCompleted() {
            onError(new IllegalStateException("echo stream: ended by the daemon"));
        }
    }
}
