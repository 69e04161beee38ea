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
 * Opens and closes sessions. Leases are granted and reported; reclaiming the sessions of clients
 * that vanish is not enforced yet (a session lives until it is closed or the daemon stops).
 */
final class SessionGrpcService extends SessionServiceGrpc.SessionServiceImplBase {

    private final Scheduler scheduler;
    private final long leaseMillis;

    SessionGrpcService(Scheduler scheduler, long leaseMillis) {
        this.scheduler = scheduler;
        this.leaseMillis = leaseMillis;
    }

    @Override
    public void openSession(OpenSessionRequest req, StreamObserver<OpenSessionResponse> out) {
        Calls.unary(out, () -> {
            Session s = scheduler.openSession(req.getClientName());
            long lease = req.getLeaseMillis() == 0 ? leaseMillis : req.getLeaseMillis();
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
            scheduler.session(req.getSession());
            return KeepAliveResponse.newBuilder().setLeaseMillis(leaseMillis).build();
        });
    }
}
