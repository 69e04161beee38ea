package dev.arrayd.server;

import dev.arrayd.proto.v1.CloseSessionRequest;
import dev.arrayd.proto.v1.CloseSessionResponse;
import dev.arrayd.proto.v1.KeepAliveRequest;
import dev.arrayd.proto.v1.KeepAliveResponse;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.OpenSessionResponse;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.scheduler.Session;
import io.grpc.stub.StreamObserver;

/**
 * Opens and closes sessions. Leases are granted (the request's, bounded to [1 s, 10 min]; 0 = the
 * default) and reported; reclaiming the sessions of clients that vanish is not enforced yet: a
 * session lives until it is closed or the daemon stops.
 */
final class SessionGrpcService extends SessionServiceGrpc.SessionServiceImplBase {

    static final long MIN_LEASE_MILLIS = 1_000;
    static final long MAX_LEASE_MILLIS = 600_000;

    private final Scheduler scheduler;
    private final long leaseMillis;

    SessionGrpcService(Scheduler scheduler, long leaseMillis) {
        this.scheduler = scheduler;
        this.leaseMillis = leaseMillis;
    }

    @Override
    public void openSession(OpenSessionRequest req, StreamObserver<OpenSessionResponse> out) {
        Calls.unary(out, () -> {
            long lease = req.getLeaseMillis() == 0 ? leaseMillis
                    : Math.clamp(req.getLeaseMillis(), MIN_LEASE_MILLIS, MAX_LEASE_MILLIS);
            Session s = scheduler.openSession(req.getClientName(), lease);
            return OpenSessionResponse.newBuilder().setSession(s.token()).setLeaseMillis(lease).build();
        });
    }

    @Override
    public void closeSession(CloseSessionRequest req, StreamObserver<CloseSessionResponse> out) {
        Calls.unary(out, () -> {
            scheduler.closeSession(scheduler.session(req.getSession()));
            return CloseSessionResponse.getDefaultInstance();
        });
    }

    @Override
    public void keepAlive(KeepAliveRequest req, StreamObserver<KeepAliveResponse> out) {
        Calls.unary(out, () -> {
            return KeepAliveResponse.newBuilder().setLeaseMillis(scheduler.session(req.getSession()).leaseMillis()).build();
        });
    }
}
