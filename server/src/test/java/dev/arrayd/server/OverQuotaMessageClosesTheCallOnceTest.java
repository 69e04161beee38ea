package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.arrayd.proto.v1.CloseSessionRequest;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.KeepAliveRequest;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.Upload;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A message over the tenant's message size quota ends its call once. Found by the process fuzz run:
 * the call was closed by the quota but its handler still heard the half-close (a unary handler then
 * closed it again: IllegalStateException on the transport thread) or kept the session stream attached
 * (closing the session later closed the call again: CloseSession answered INTERNAL, and SIGTERM hung).
 */
class OverQuotaMessageClosesTheCallOnceTest {

    TenantFixture f;
    TenantFixture.Client alice; // message=2MiB
    String session;
    long buffer;

    @BeforeEach
    void setUp() throws Exception {
        f = new TenantFixture();
        alice = f.client(TenantFixture.ALICE);
        session = alice.openSession(60_000);
        buffer = alice.buffers.createBuffer(Protos.f32(session, 1000)).getBuffer().getBuffer();
    }

    @AfterEach
    void tearDown() throws Exception {
        f.close();
    }

    Command tooBig() {
        return Command.newBuilder().setUpload(Upload.newBuilder().setBuffer(buffer)
                .setData(ByteString.copyFrom(new byte[3 << 20]))).build();
    }

    @Test
    void aSessionStreamEndedByTheQuotaLetsGoOfItsSession() throws Exception {
        SessionStreamProbe stream = new SessionStreamProbe(alice.execAsync);
        stream.attach(session);
        stream.send(1, tooBig());
        Status s = stream.ended.get(30, TimeUnit.SECONDS);
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getCode());
        assertTrue(s.getDescription().startsWith("tenant alice: message size quota 2097152 bytes exceeded"),
                s.getDescription());
        assertEquals(0, f.sessions().find(session).liveStreams.get(), "the stream no longer keeps the session");
        alice.sessions.closeSession(CloseSessionRequest.newBuilder().setSession(session).build()); // not INTERNAL
    }

    @Test
    void aUnaryCallEndedByTheQuotaIsAnsweredOnceAndTheNextCallWorks() {
        StatusRuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(StatusRuntimeException.class,
                () -> alice.exec.submit(SubmitRequest.newBuilder().setSession(session).addCommands(tooBig()).build()));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
        alice.sessions.keepAlive(KeepAliveRequest.newBuilder().setSession(session).build());
    }
}
