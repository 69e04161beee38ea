package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.remote.RemoteBackend;
import dev.arrayd.proto.v1.FetchRequest;
import dev.arrayd.proto.v1.FetchResponse;
import dev.arrayd.proto.v1.MeasureLinkRequest;
import dev.arrayd.proto.v1.MeasureLinkResponse;
import dev.arrayd.proto.v1.OpenBulkLinkRequest;
import dev.arrayd.proto.v1.OpenBulkLinkResponse;
import dev.arrayd.proto.v1.PeerServiceGrpc;
import dev.arrayd.scheduler.CommandSpec;
import dev.arrayd.scheduler.Event;
import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.scheduler.Session;
import io.grpc.stub.StreamObserver;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Daemon to daemon: a fetch writes bytes read from one of this daemon's peers into a buffer of the caller's
 * session, each chunk an upload submitted as it arrives (ordered on the buffer like the caller's own commands);
 * the answer comes when the last one is done. The bytes travel peer to here, never through the caller.
 */
final class PeerGrpcService extends PeerServiceGrpc.PeerServiceImplBase {

    /** Most bytes one link measurement may stream. */
    static final long MAX_MEASURE_BYTES = 4L << 30;

    private final Scheduler scheduler;
    private final SessionRegistry sessions;
    private final RemoteBackend remote;
    private final BulkPort bulk;

    /**
     * {@code remote} null: this daemon has no peers, and fetches are refused; {@code bulk} null: it has no bulk
     * port, and OpenBulkLink is refused.
     */
    PeerGrpcService(Scheduler scheduler, SessionRegistry sessions, RemoteBackend remote, BulkPort bulk) {
        this.scheduler = scheduler;
        this.sessions = sessions;
        this.remote = remote;
        this.bulk = bulk;
    }

    @Override
    public void openBulkLink(OpenBulkLinkRequest req, StreamObserver<OpenBulkLinkResponse> out) {
        try {
            SessionLease l = sessions.lease(req.getSession());
            if (bulk == null) {
                throw new ArraydException(ErrorCode.FAILED_PRECONDITION, "this daemon has no bulk port (peer-bulk-port "
                        + "is -1, or the daemon serves TLS): read through BufferService.ReadBuffer");
            }
            Calls.complete(out, OpenBulkLinkResponse.newBuilder().setPort(bulk.port())
                    .setKey(com.google.protobuf.ByteString.copyFrom(bulk.keyFor(l))).build());
        } catch (RuntimeException e) {
            Calls.fail(out, e);
        }
    }

    private RemoteBackend remote() {
        if (remote == null) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, "this daemon has no peers (serve --peers)");
        }
        return remote;
    }

    @Override
    public void fetch(FetchRequest req, StreamObserver<FetchResponse> out) {
        try {
            Session s = sessions.session(req.getSession());
            long buffer = req.getBuffer();
            long at = Wire.size(req.getOffsetBytes(), "offset_bytes");
            long size = Wire.size(req.getSizeBytes(), "size_bytes");
            long from = Wire.size(req.getSourceOffsetBytes(), "source_offset_bytes");
            if (size == 0) {
                throw ArraydException.invalid("size_bytes: 0 (expected: at least 1)");
            }
            long limit = scheduler.buffer(s, buffer).sizeBytes();
            if (at > limit || size > limit - at) {
                throw new ArraydException(ErrorCode.OUT_OF_RANGE, "offset_bytes + size_bytes: " + at + " + " + size
                        + " (expected: within the " + limit + " bytes of buffer " + Long.toHexString(buffer) + ")");
            }
            long start = System.nanoTime();
            AtomicReference<Event> last = new AtomicReference<>();
            remote().fetch(req.getSourceTarget(), req.getSourceCapability(), from, size, (offset, data, done) -> {
                if (offset < 0 || offset + data.remaining() > size) {
                    throw new ArraydException(ErrorCode.INTERNAL, "the source sent bytes at " + offset + " (expected: within "
                            + size + ")");
                }
                Event e = scheduler.submit(s, new CommandSpec(0, null, 0, new CommandSpec.UploadOp(buffer, at + offset,
                        MemorySegment.ofBuffer(data), false)), null);
                last.set(e);
                e.onDone(uploaded -> done.run()); // the bytes were copied (or will never be)
            }).whenComplete((bytes, t) -> {
                if (t != null) {
                    Calls.fail(out, t instanceof java.util.concurrent.CompletionException && t.getCause() != null
                            ? t.getCause() : t);
                    return;
                }
                Event e = last.get();
                if (e == null || bytes != size) {
                    Calls.fail(out, new ArraydException(ErrorCode.OUT_OF_RANGE, "source: " + bytes + " bytes read (expected: "
                            + size + ")"));
                    return;
                }
                e.onDone(done -> {
                    if (done.isFailed()) {
                        Calls.fail(out, done.failure());
                    } else {
                        Calls.complete(out, FetchResponse.newBuilder().setBytes(bytes).setNanos(System.nanoTime() - start)
                                .build());
                    }
                });
            });
        } catch (RuntimeException e) {
            Calls.fail(out, e);
        }
    }

    @Override
    public void measureLink(MeasureLinkRequest req, StreamObserver<MeasureLinkResponse> out) {
        try {
            long bytes = req.getBytes();
            if (bytes <= 0 || bytes > MAX_MEASURE_BYTES) {
                throw ArraydException.invalid("bytes: " + dev.arrayd.devices.api.Quote.unsigned(bytes) + " (expected: 1 to "
                        + MAX_MEASURE_BYTES + ")");
            }
            int chunk = req.getChunkBytes() == 0 ? 1 << 20 : req.getChunkBytes();
            if (chunk < 0 || chunk > (4 << 20)) {
                throw ArraydException.invalid("chunk_bytes: " + Integer.toUnsignedString(chunk) + " (expected: 1 to 4194304)");
            }
            remote().measureLink(req.getTarget(), bytes, chunk).whenComplete((nanos, t) -> {
                if (t != null) {
                    Calls.fail(out, t);
                } else {
                    Calls.complete(out, MeasureLinkResponse.newBuilder().setBytes(bytes).setNanos(nanos).build());
                }
            });
        } catch (RuntimeException e) {
            Calls.fail(out, e);
        }
    }
}
