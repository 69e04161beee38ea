package dev.arrayd.benchmarks;

import com.google.protobuf.UnsafeByteOperations;
import dev.arrayd.proto.v1.DiagnosticsServiceGrpc;
import dev.arrayd.proto.v1.SinkRequest;
import dev.arrayd.proto.v1.SinkResponse;
import dev.arrayd.proto.v1.SourceRequest;
import dev.arrayd.proto.v1.SourceResponse;
import io.grpc.Channel;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletableFuture;

/**
 * The transfer anchors: bytes moved with plain generated stubs over {@code DiagnosticsService.Sink} and
 * {@code Source}, what a user would write with gRPC alone. Chunks are sent the way client-java sends its
 * commands (back to back, gRPC buffering what the transport cannot take yet), wrapping the caller's
 * array without a copy.
 */
final class RawStreams {

    private final DiagnosticsServiceGrpc.DiagnosticsServiceStub stub;

    RawStreams(Channel channel) {
        this.stub = DiagnosticsServiceGrpc.newStub(channel);
    }

    /** Streams {@code data} in chunks of {@code chunkBytes}; completes when the daemon has counted them all. */
    CompletableFuture<SinkResponse> sink(byte[] data, int chunkBytes) {
        CompletableFuture<SinkResponse> done = new CompletableFuture<>();
        StreamObserver<SinkRequest> out = stub.sink(new StreamObserver<>() {
            @Override
            public void onNext(SinkResponse s) {
                if (s.getBytes() != data.length) {
                    done.completeExceptionally(new IllegalStateException("sink counted " + s.getBytes()
                            + " bytes (expected: " + data.length + ")"));
                } else {
                    done.complete(s);
                }
            }

            @Override
            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                done.completeExceptionally(new IllegalStateException("sink ended without a summary"));
            }
        });
        for (int pos = 0; pos < data.length; pos += chunkBytes) {
            int len = Math.min(chunkBytes, data.length - pos);
            out.onNext(SinkRequest.newBuilder().setData(UnsafeByteOperations.unsafeWrap(data, pos, len)).build());
        }
        out.onCompleted();
        return done;
    }

    /**
     * Receives {@code totalBytes} in chunks of {@code chunkBytes} into {@code into} (so the anchor pays the
     * same copy out of the message as a read does); completes when the stream has ended.
     */
    CompletableFuture<Long> source(byte[] into, int chunkBytes) {
        CompletableFuture<Long> done = new CompletableFuture<>();
        stub.source(SourceRequest.newBuilder().setTotalBytes(into.length).setChunkBytes(chunkBytes).build(),
                new StreamObserver<>() {
                    private int at;

                    @Override
                    public void onNext(SourceResponse c) {
                        c.getData().copyTo(into, at);
                        at += c.getData().size();
                    }

                    @Override
                    public void onError(Throwable t) {
                        done.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        if (at != into.length) {
                            done.completeExceptionally(new IllegalStateException("source sent " + at
                                    + " bytes (expected: " + into.length + ")"));
                        } else {
                            done.complete((long) at);
                        }
                    }
                });
        return done;
    }
}
