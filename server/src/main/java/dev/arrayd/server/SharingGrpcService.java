package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.proto.v1.OpenSharedBufferRequest;
import dev.arrayd.proto.v1.OpenSharedBufferResponse;
import dev.arrayd.proto.v1.ShareBufferRequest;
import dev.arrayd.proto.v1.ShareBufferResponse;
import dev.arrayd.proto.v1.SharingServiceGrpc;
import dev.arrayd.scheduler.Buffer;
import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.server.auth.AuthInterceptor;
import io.grpc.stub.StreamObserver;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Capabilities: unguessable tokens that let another session (of any tenant, or of one named
 * tenant) open a handle to a buffer, read-only or read-write. A capability of a buffer whose
 * memory is gone, an unknown one and one meant for another tenant are all the same NOT_FOUND.
 */
final class SharingGrpcService extends SharingServiceGrpc.SharingServiceImplBase {

    private static final SecureRandom RANDOM = new SecureRandom();

    /** What a capability grants. */
    private record Capability(Buffer buffer, boolean readOnly, String tenant) {}

    private final Scheduler scheduler;
    private final SessionRegistry sessions;
    private final Map<String, Capability> capabilities = new ConcurrentHashMap<>();

    SharingGrpcService(Scheduler scheduler, SessionRegistry sessions) {
        this.scheduler = scheduler;
        this.sessions = sessions;
    }

    @Override
    public void shareBuffer(ShareBufferRequest req, StreamObserver<ShareBufferResponse> out) {
        Calls.unary(out, () -> {
            SessionLease l = sessions.lease(req.getSession());
            Buffer b = scheduler.buffer(l.session, req.getBuffer());
            if (!req.getReadOnly() && l.session.isReadOnly(req.getBuffer())) {
                throw new ArraydException(dev.arrayd.devices.api.ErrorCode.PERMISSION_DENIED, "buffer "
                        + "0x" + Long.toHexString(req.getBuffer()) + ": held read-only (expected: read_only = true)");
            }
            byte[] bits = new byte[16];
            RANDOM.nextBytes(bits);
            String cap = HexFormat.of().formatHex(bits);
            capabilities.put(cap, new Capability(b, req.getReadOnly(), req.getTenant()));
            prune();
            return ShareBufferResponse.newBuilder().setCapability(cap).build();
        });
    }

    @Override
    public void openSharedBuffer(OpenSharedBufferRequest req, StreamObserver<OpenSharedBufferResponse> out) {
        Calls.unary(out, () -> {
            SessionLease l = sessions.lease(req.getSession());
            Capability c = capabilities.get(req.getCapability());
            if (c == null || (!c.tenant().isEmpty() && !c.tenant().equals(AuthInterceptor.current().name()))) {
                throw ArraydException.notFound("capability: (not found)");
            }
            long h;
            try {
                h = scheduler.importBuffer(l.session, c.buffer(), c.readOnly());
            } catch (ArraydException e) {
                capabilities.remove(req.getCapability(), c);
                throw ArraydException.notFound("capability: (not found)");
            }
            return OpenSharedBufferResponse.newBuilder().setInfo(ProtoCodec.bufferInfo(scheduler.buffer(l.session, h),
                    scheduler.replicaStates(scheduler.buffer(l.session, h))))
                    .setReadOnly(l.session.isReadOnly(h)).build();
        });
    }

    /** Forgets capabilities of buffers no session holds any more (amortized: on each new share). */
    private void prune() {
        if (capabilities.size() % 64 == 0) {
            capabilities.values().removeIf(c -> c.buffer().isFreed());
        }
    }
}
