package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.proto.v1.CreateRegionRequest;
import dev.arrayd.proto.v1.CreateRegionResponse;
import dev.arrayd.proto.v1.DestroyRegionRequest;
import dev.arrayd.proto.v1.DestroyRegionResponse;
import dev.arrayd.proto.v1.RegionServiceGrpc;
import dev.arrayd.server.regions.Region;
import dev.arrayd.server.regions.RegionBroker;
import io.grpc.stub.StreamObserver;
import java.io.IOException;

/**
 * RegionService: a session's shared-memory regions. Their bytes are charged to the tenant's device memory
 * quota from creation until they are freed (after DestroyRegion or the session's end, once its commands
 * in flight are done). Without the daemon's Unix socket there are none: FAILED_PRECONDITION.
 */
final class RegionGrpcService extends RegionServiceGrpc.RegionServiceImplBase {

    private final SessionRegistry sessions;

    RegionGrpcService(SessionRegistry sessions) {
        this.sessions = sessions;
    }

    @Override
    public void createRegion(CreateRegionRequest req, StreamObserver<CreateRegionResponse> out) {
        Calls.unary(out, () -> {
            SessionLease l = sessions.lease(req.getSession());
            RegionBroker broker = sessions.regions();
            if (broker == null) {
                throw new ArraydException(ErrorCode.FAILED_PRECONDITION, "region: this daemon has no shared-memory "
                        + "regions (they need its Unix domain socket: serve --uds PATH)");
            }
            long asked = req.getSizeBytes();
            if (asked == 0 || Long.compareUnsigned(asked, RegionBroker.MAX_REGION_BYTES) > 0) {
                throw ArraydException.invalid("size_bytes: " + Long.toUnsignedString(asked) + " (expected: 1 to "
                        + RegionBroker.MAX_REGION_BYTES + ")");
            }
            long bytes = RegionBroker.pages(asked);
            l.usage.reserveMemory(bytes);
            Region r;
            try {
                r = broker.create(bytes, l.inFlight::get, () -> l.usage.memoryBytes.addAndGet(-bytes));
            } catch (IOException | RuntimeException e) {
                l.usage.memoryBytes.addAndGet(-bytes);
                throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, "region of " + bytes + " bytes: "
                        + e.getMessage(), e);
            }
            l.regions.put(r);
            if (l.closed) { // the session ended meanwhile: its regions went before this one came
                l.regions.removeAll().forEach(broker::retire);
                throw SessionRegistry.notFound(req.getSession());
            }
            return CreateRegionResponse.newBuilder().setRegion(r.handle()).setSizeBytes(r.size())
                    .setDescriptorSocket(broker.socket().toString()).setClaim(r.claim()).build();
        });
    }

    @Override
    public void destroyRegion(DestroyRegionRequest req, StreamObserver<DestroyRegionResponse> out) {
        Calls.unary(out, () -> {
            SessionLease l = sessions.lease(req.getSession());
            Region r = l.regions.remove(req.getRegion(), "region");
            sessions.regions().retire(r);
            return DestroyRegionResponse.getDefaultInstance();
        });
    }
}
