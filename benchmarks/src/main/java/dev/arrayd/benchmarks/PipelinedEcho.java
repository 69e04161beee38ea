package dev.arrayd.benchmarks;

import com.google.protobuf.ByteString;
import dev.arrayd.proto.v1.DiagnosticsServiceGrpc;
import dev.arrayd.proto.v1.EchoRequest;
import dev.arrayd.proto.v1.EchoResponse;
import io.grpc.Channel;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Echo messages on one {@code DiagnosticsService.Echo} bidi stream with many in flight: the stream
 * answers in order, so the oldest pending future is the one each answer completes. One future per
 * message, like the event future of a launch. Not thread-safe: one caller of {@link #fire} at a time.
 */
final class PipelinedEcho implements RoundTrip, AutoCloseable {

    private final ByteString payload = ByteString.copyFrom(new byte[EchoRoundTrip.PAYLOAD_BYTES]);
    private final ConcurrentLinkedQueue<CompletableFuture<EchoResponse>> pending = new ConcurrentLinkedQueue<>();
    private final StreamObserver<EchoRequest> requests;
    private volatile Throwable failure;
    private long seq;

    PipelinedEcho(Channel channel) {
        this.requests = DiagnosticsServiceGrpc.newStub(channel).echo(new StreamObserver<>() {
            @Override
            public void onNext(EchoResponse m) {
                CompletableFuture<EchoResponse> f = pending.poll();
                if (f != null) {
                    f.complete(m);
                }
            }

            @Override
            public void onError(Throwable t) {
                failure = t;
                CompletableFuture<EchoResponse> f;
                while ((f = pending.poll()) != null) {
                    f.completeExceptionally(t);
                }
            }

            @Override
            public void onCompleted() {
                onError(new IllegalStateException("echo stream: ended by the daemon"));
            }
        });
    }

    @Override
    public CompletableFuture<EchoResponse> fire() {
        CompletableFuture<EchoResponse> f = new CompletableFuture<>();
        Throwable t = failure;
        if (t != null) {
            f.completeExceptionally(t);
            return f;
        }
        pending.add(f);
        requests.onNext(EchoRequest.newBuilder().setSeq(++seq).setPayload(payload).build());
        return f;
    }

    @Override
    public void close() {
        requests.onCompleted();
    }
}
