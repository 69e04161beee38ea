package dev.arrayd.server;

import static dev.arrayd.server.Protos.f32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.proto.v1.CloseSessionRequest;
import dev.arrayd.proto.v1.CreateStreamRequest;
import dev.arrayd.proto.v1.DescribeBufferRequest;
import dev.arrayd.proto.v1.KeepAliveRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Leases are enforced: a session not renewed for its lease is reclaimed with all it held (fake clock). */
class SessionLeaseTest {

    TenantFixture f;
    TenantFixture.Client bob;

    @BeforeEach
    void setUp() throws Exception {
        f = new TenantFixture();
        bob = f.client(TenantFixture.BOB);
    }

    @AfterEach
    void tearDown() throws Exception {
        f.close();
    }

    @Test
    void aSessionNotRenewedForItsLeaseIsReclaimedWithEverythingItHeld() {
        String s = bob.openSession(2_000);
        long b = bob.buffers.createBuffer(f32(s, 1 << 16)).getBuffer();
        bob.exec.createStream(CreateStreamRequest.newBuilder().setSession(s).build());
        assertTrue(f.usedBytes() > 0);
        f.clock.advance(1_999, TimeUnit.MILLISECONDS);
        assertEquals(0, f.sessions().reapExpired(), "within the lease");
        f.clock.advance(2, TimeUnit.MILLISECONDS);
        assertEquals(1, f.sessions().reapExpired(), "past the lease");
        f.assertPoolsEmpty();
        assertEquals(0, f.sessions().usageOf("bob").memoryBytes.get(), "memory counted back to the tenant");
        assertEquals(0, f.sessions().usageOf("bob").streams.get(), "streams counted back to the tenant");
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> bob.buffers.describeBuffer(
                DescribeBufferRequest.newBuilder().setSession(s).setBuffer(b).build()));
        assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
        assertEquals(1.0, f.server.metrics().registry().get("arrayd.sessions.reclaimed").counter().count());
    }

    @Test
    void keepAliveAndAnyCallRenewTheLease() {
        String s = bob.openSession(2_000);
        for (int i = 0; i < 5; i++) {
            f.clock.advance(1_500, TimeUnit.MILLISECONDS);
            if (i % 2 == 0) {
                bob.sessions.keepAlive(KeepAliveRequest.newBuilder().setSession(s).build());
            } else {
                bob.buffers.createBuffer(f32(s, 16));
            }
            assertEquals(0, f.sessions().reapExpired());
        }
        f.clock.advance(2_001, TimeUnit.MILLISECONDS);
        assertEquals(1, f.sessions().reapExpired());
        f.assertPoolsEmpty();
    }

    @Test
    void explicitCloseFreesAtOnce() {
        String s = bob.openSession(60_000);
        bob.buffers.createBuffer(f32(s, 1 << 16));
        bob.sessions.closeSession(CloseSessionRequest.newBuilder().setSession(s).build());
        f.assertPoolsEmpty();
        assertEquals(0, f.sessions().size());
        assertEquals(0, f.sessions().reapExpired());
    }
}
