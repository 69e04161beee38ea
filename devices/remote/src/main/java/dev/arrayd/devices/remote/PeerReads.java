package dev.arrayd.devices.remote;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.proto.v1.DiagnosticsServiceGrpc;
import dev.arrayd.proto.v1.OpenSharedBufferRequest;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.SharingServiceGrpc;
import dev.arrayd.proto.v1.SourceRequest;
import dev.arrayd.proto.v1.SourceResponse;
import io.grpc.CallOptions;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * Reads from a peer on behalf of another daemon: the bytes of a buffer shared by capability (what a
 * {@code PeerService.Fetch} moves), and raw bytes of its diagnostics source (what {@code MeasureLink} times).
 * Both stream: the peer sends chunks as flow control allows, and each is handed on as it arrives.
 */
final class PeerReads {

    private PeerReads() {}

    /**
     * Receives a read's chunks in order: {@code offset} from the start of the read range; {@code done} is run once
     * {@code data} is no longer needed (its array goes back to the pool). A sink that throws keeps nothing and
     * never runs {@code done}.
     */
    interface ChunkSink {
        void accept(long offset, ByteBuffer data, Runnable done);
    }

    /**
     * Streams {@code size} bytes from {@code offset} of the buffer {@code capability} opens on the peer of
     * {@code link} to {@code sink}; completes with the byte count once the last chunk was handed on. The range is
     * read in pieces of {@link #PIECE} bytes, {@link #IN_FLIGHT} reads at a time (each its own call, flow
     * controlled by gRPC): the peer stages one piece while the previous ones stream, and no side holds the whole
     * range at once. Each piece is read through the peer's bulk port when it has one ({@link BulkLink}: plain byte
     * streams, on a virtual thread per piece), else as a {@code ReadBuffer} call.
     */
    static CompletableFuture<Long> read(PeerLink link, String capability, long offset, long size, ChunkSink sink) {
        PeerLink.Connection c = link.connection();
        long handle;
        BulkLink bulk;
        try {
            handle = opened(link, c, capability);
            bulk = BulkLink.of(link, c);
        } catch (ArraydException e) {
            return CompletableFuture.failedFuture(e);
        }
        Pieces pieces = new Pieces(link, c, handle, offset, size, sink, bulk);
        for (int i = 0; i < IN_FLIGHT; i++) {
            pieces.next();
        }
        return pieces.done;
    }

    /** Bytes of one read call. */
    static final long PIECE = 8L << 20;
    /** Read calls in flight at once. */
    static final int IN_FLIGHT = 4;

    /** The pieces of one read: each started as an earlier one ends, until all have arrived. */
    private static final class Pieces {
        final PeerLink link;
        final PeerLink.Connection c;
        final long handle;
        final long offset;
        final long size;
        final ChunkSink sink;
        final BulkLink bulk;
        final CompletableFuture<Long> done = new CompletableFuture<>();
        private long nextAt;
        private int running;
        private long got;

        Pieces(PeerLink link, PeerLink.Connection c, long handle, long offset, long size, ChunkSink sink, BulkLink bulk) {
            this.link = link;
            this.bulk = bulk;
            this.c = c;
            this.handle = handle;
            this.offset = offset;
            this.size = size;
            this.sink = sink;
        }

        /** Reads one piece through the bulk port (on a virtual thread of its own), then starts the next. */
        private void readBulk(long at, long len) {
            try {
                if (!done.isDone()) {
                    bulk.read(c.session().id(), handle, offset + at, len, at, (o, data, release) -> {
                        if (done.isDone()) {
                            release.run(); // (another piece failed: nobody wants these bytes)
                            return;
                        }
                        int bytes = data.remaining();
                        sink.accept(o, data, release);
                        synchronized (Pieces.this) {
                            got += bytes;
                        }
                    });
                }
            } catch (BulkLink.NoConnection e) {
                readGrpc(at, len); // (the bulk port did not take one more connection: nothing was read)
                return;
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
            synchronized (this) {
                running--;
            }
            next();
        }

        /** Starts the next piece, if any is left; completes the read when none is left or running. */
        synchronized void next() {
            if (done.isDone()) {
                return;
            }
            if (nextAt >= size) {
                if (running == 0) {
                    done.complete(got);
                }
                return;
            }
            long at = nextAt;
            long len = Math.min(PIECE, size - at);
            nextAt += len;
            running++;
            if (bulk != null) {
                Thread.ofVirtual().name("arrayd-peer-bulk-read").start(() -> readBulk(at, len));
                return;
            }
            readGrpc(at, len);
        }

        /** Reads one piece as a {@code ReadBuffer} call, then starts the next. */
        private void readGrpc(long at, long len) {
            ReadBufferRequest req = ReadBufferRequest.newBuilder().setSession(c.session().id()).setBuffer(handle)
                    .setOffsetBytes(offset + at).setSizeBytes(len).setChunkBytes(ReadChunks.CHUNK).build();
            ClientCalls.asyncServerStreamingCall(c.channel().newCall(ReadChunks.METHOD, CallOptions.DEFAULT), req,
                    new StreamObserver<ReadChunks.ReadChunk>() {
                @Override
                public void onNext(ReadChunks.ReadChunk r) {
                    if (done.isDone()) {
                        r.release();
                        return;
                    }
                    int bytes = r.data().remaining();
                    try {
                        sink.accept(r.offset() - offset, r.data(), r::release);
                        synchronized (Pieces.this) {
                            got += bytes;
                        }
                    } catch (RuntimeException e) {
                        r.release(); // (a sink that throws kept nothing)
                        done.completeExceptionally(e);
                    }
                }

                @Override
                public void onError(Throwable t) {
                    done.completeExceptionally(link.failure(c, t));
                }

                @Override
                public void onCompleted() {
                    synchronized (Pieces.this) {
                        running--;
                    }
                    next();
                }
            });
        }
    }

    /** The handle of {@code capability} in this daemon's session on the peer (opened once per connection). */
    private static long opened(PeerLink link, PeerLink.Connection c, String capability) {
        Long h = c.opened().get(capability);
        if (h != null) {
            return h;
        }
        var f = SharingServiceGrpc.newFutureStub(c.channel()).openSharedBuffer(OpenSharedBufferRequest.newBuilder()
                .setSession(c.session().id()).setCapability(capability).build());
        long handle = link.await(c, toCompletable(f)).getInfo().getBuffer();
        c.opened().put(capability, handle);
        return handle;
    }

    /** Streams {@code bytes} bytes of the peer's diagnostics source; completes with the nanoseconds it took. */
    static CompletableFuture<Long> measure(PeerLink link, long bytes, int chunkBytes) {
        PeerLink.Connection c = link.connection();
        CompletableFuture<Long> done = new CompletableFuture<>();
        long start = System.nanoTime();
        DiagnosticsServiceGrpc.newStub(c.channel()).source(SourceRequest.newBuilder().setTotalBytes(bytes)
                .setChunkBytes(chunkBytes).build(), new StreamObserver<SourceResponse>() {
                    @Override
                    public void onNext(SourceResponse r) {
                    }

                    @Override
                    public void onError(Throwable t) {
                        done.completeExceptionally(link.failure(c, t));
                    }

                    @Override
                    public void onCompleted() {
                        done.complete(System.nanoTime() - start);
                    }
                });
        return done;
    }

    static <T> CompletableFuture<T> toCompletable(com.google.common.util.concurrent.ListenableFuture<T> f) {
        CompletableFuture<T> out = new CompletableFuture<>();
        f.addListener(() -> {
            try {
                out.complete(f.get());
            } catch (java.util.concurrent.ExecutionException e) {
                out.completeExceptionally(e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                out.completeExceptionally(e);
            }
        }, Runnable::run);
        return out;
    }
}
