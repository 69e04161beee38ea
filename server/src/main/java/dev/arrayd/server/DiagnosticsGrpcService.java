package dev.arrayd.server;

import com.google.protobuf.ByteString;
import dev.arrayd.proto.v1.DiagnosticsServiceGrpc;
import dev.arrayd.proto.v1.EchoRequest;
import dev.arrayd.proto.v1.EchoResponse;
import dev.arrayd.proto.v1.SinkRequest;
import dev.arrayd.proto.v1.SinkResponse;
import dev.arrayd.proto.v1.SourceRequest;
import dev.arrayd.proto.v1.SourceResponse;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

/**
 * Plain streams on the same server stack as the session stream: the anchors of the benchmarks.
 * {@code Echo} (latency, throughput) returns each message; {@code Sink} and {@code Source}
 * (transfer) move bytes and do nothing else with them, so the difference to an upload or a
 * download through the session stream is what arrayd adds. All run on the transport thread and
 * never block.
 */
final class DiagnosticsGrpcService extends DiagnosticsServiceGrpc.DiagnosticsServiceImplBase {

    /** Largest {@code Source} chunk: bounded so one message never nears the message size limit. */
    static final int MAX_CHUNK_BYTES = 4 << 20;
    /** Largest {@code Source} total: a diagnostics call must end. */
    static final long MAX_TOTAL_BYTES = 1L << 40;

    @Override
    public StreamObserver<EchoRequest> echo(StreamObserver<EchoResponse> out) {
        return new StreamObserver<>() {
            @Override
            public void onNext(EchoRequest m) {
                out.onNext(EchoResponse.newBuilder().setSeq(m.getSeq()).setPayload(m.getPayload()).build());
            }

            @Override
            public void onError(Throwable t) {
                // the client went away
            }

            @Override
            public void onCompleted() {
                out.onCompleted();
            }
        };
    }

    @Override
    public StreamObserver<SinkRequest> sink(StreamObserver<SinkResponse> out) {
        return new StreamObserver<>() {
            private long chunks;
            private long bytes;

            @Override
            public void onNext(SinkRequest c) {
                chunks++;
                bytes += c.getData().size();
            }

            @Override
            public void onError(Throwable t) {
                // the client went away
            }

            @Override
            public void onCompleted() {
                out.onNext(SinkResponse.newBuilder().setChunks(chunks).setBytes(bytes).build());
                out.onCompleted();
            }
        };
    }

    @Override
    public void source(SourceRequest req, StreamObserver<SourceResponse> responses) {
        if (req.getChunkBytes() < 1 || req.getChunkBytes() > MAX_CHUNK_BYTES) {
            responses.onError(Status.INVALID_ARGUMENT.withDescription("chunk_bytes: "
                    + Integer.toUnsignedString(req.getChunkBytes()) + " (expected: 1 to " + MAX_CHUNK_BYTES + ")")
                    .asRuntimeException());
            return;
        }
        if (req.getTotalBytes() < 0 || req.getTotalBytes() > MAX_TOTAL_BYTES) {
            responses.onError(Status.INVALID_ARGUMENT.withDescription("total_bytes: "
                    + Long.toUnsignedString(req.getTotalBytes()) + " (expected: 0 to " + MAX_TOTAL_BYTES + ")")
                    .asRuntimeException());
            return;
        }
        ServerCallStreamObserver<SourceResponse> out = (ServerCallStreamObserver<SourceResponse>) responses;
        // One chunk of zeros, sent again and again: the anchor measures the transport, not a copy.
        SourceResponse full = SourceResponse.newBuilder().setData(ByteString.copyFrom(new byte[req.getChunkBytes()])).build();
        long total = req.getTotalBytes();
        // Sends while the transport can take more and resumes in the ready handler: without this the
        // whole total would queue in memory. The handler runs on the transport thread, one at a time.
        out.setOnReadyHandler(new Runnable() {
            private long sent;
            private boolean done;

            @Override
            public void run() {
                while (!done && out.isReady() && !out.isCancelled()) {
                    long left = total - sent;
                    if (left == 0) {
                        done = true;
                        out.onCompleted();
                        return;
                    }
                    SourceResponse c = left >= full.getData().size() ? full
                            : SourceResponse.newBuilder().setData(full.getData().substring(0, (int) left)).build();
                    out.onNext(c);
                    sent += c.getData().size();
                }
            }
        });
    }
}
