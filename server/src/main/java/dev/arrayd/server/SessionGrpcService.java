package dev.arrayd.server;

import dev.arrayd.proto.v1.CloseSessionRequest;
import dev.arrayd.proto.v1.CloseSessionResponse;
import dev.arrayd.proto.v1.KeepAliveRequest;
import dev.arrayd.proto.v1.KeepAliveResponse;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.OpenSessionResponse;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import dev.arrayd.scheduler.Session;
import io.grpc.stub.StreamObserver;

/**
 * Opens and closes sessions. Leases are granted (the request's, bounded to [1 s, 10 min]; 0 = the
 * default) and enforced by {@link SessionRegistry#reapExpired()}: every call naming the session,
 * every message on its stream and KeepAlive renew it; a session not renewed for its lease is closed
 * and everything it held is freed.
 */
final class SessionGrpcService extends SessionServiceGrpc.SessionServiceImplBase {

    static final long MIN_LEASE_MILLIS = 1_000;
    static final long MAX_LEASE_MILLIS = 600_000;

    private final SessionRegistry sessions;
    private final long leaseMillis;

    SessionGrpcService(SessionRegistry sessions, long leaseMillis) {
        this.sessions = sessions;
        this.leaseMillis = leaseMillis;
    }

    @Override
    public void openSession(OpenSessionRequest req, StreamObserver<OpenSessionResponse> out) {
        Calls.unary(out, () -> {
            long asked = ProtoTime.millis(req.getLease(), "lease");
            long lease = asked == 0 ? leaseMillis : Math.clamp(asked, MIN_LEASE_MILLIS, MAX_LEASE_MILLIS);
            long receive = SessionLease.receiveBytes(req.getMaxReceiveMessageBytes(), "max_receive_message_bytes");
            Session s = sessions.open(req.getClientName(), lease, receive).session;
            s.setDependenciesOnlyOrder(req.getDependenciesOnlyOrder()); // (before the token is known: no command yet)
            return OpenSessionResponse.newBuilder().setSession(s.token()).setLease(ProtoTime.ofMillis(lease)).build();
        });
    }

    @Override
    public void closeSession(CloseSessionRequest req, StreamObserver<CloseSessionResponse> out) {
        Calls.unary(out, () -> {
            sessions.close(sessions.lease(req.getSession()));
            return CloseSessionResponse.getDefaultInstance();
        });
    }

    @Override
    public void keepAlive(KeepAliveRequest req, StreamObserver<KeepAliveResponse> out) {
        Calls.unary(out, () -> {
            // the lookup renews the lease
            return KeepAliveResponse.newBuilder().setLease(ProtoTime.ofMillis(sessions.session(req.getSession()).leaseMillis())).build();
        });
    }
}
