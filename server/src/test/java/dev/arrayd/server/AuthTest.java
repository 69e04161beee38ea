package dev.arrayd.server;

import static dev.arrayd.server.Protos.f32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.arrayd.proto.v1.BufferInfo;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CreateStreamRequest;
import dev.arrayd.proto.v1.DeviceServiceGrpc;
import dev.arrayd.proto.v1.ListDevicesRequest;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.Upload;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import java.nio.file.Files;
import java.nio.file.attribute.FileTime;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Bearer tokens, tenants, cross-tenant refusal, token file reloads and quotas (in-process, fake clock). */
class AuthTest {

    TenantFixture f;
    TenantFixture.Client alice;
    TenantFixture.Client bob;

    @BeforeEach
    void setUp() throws Exception {
        f = new TenantFixture();
        alice = f.client(TenantFixture.ALICE);
        bob = f.client(TenantFixture.BOB);
    }

    @AfterEach
    void tearDown() throws Exception {
        f.close();
    }

    static Status status(Supplier<?> call) {
        return assertThrows(StatusRuntimeException.class, call::get).getStatus();
    }

    @Test
    void callsWithoutAValidTokenAreUnauthenticatedButHealthStaysOpen() {
        for (String token : new String[] {null, "not-a-token-of-the-file-at-all"}) {
            var c = f.client(token);
            Status s = status(() -> DeviceServiceGrpc.newBlockingStub(c.channel).listDevices(ListDevicesRequest.getDefaultInstance()));
            assertEquals(Status.Code.UNAUTHENTICATED, s.getCode());
            assertTrue(s.getDescription().contains("--token or ARRAYD_TOKEN"), s.getDescription());
            assertEquals(Status.Code.UNAUTHENTICATED, status(() -> c.openSession(0)).getCode());
            assertEquals("SERVING", HealthGrpc.newBlockingStub(c.channel).check(HealthCheckRequest.getDefaultInstance())
                    .getStatus().name());
        }
        assertTrue(DeviceServiceGrpc.newBlockingStub(bob.channel).listDevices(ListDevicesRequest.getDefaultInstance())
                .getDevicesCount() > 0);
    }

    @Test
    void anotherTenantsSessionTokenIsNotFoundExactlyLikeAnUnknownOne() {
        String s = alice.openSession(0);
        Status stolen = status(() -> bob.buffers.createBuffer(f32(s, 4)).getBuffer());
        Status unknown = status(() -> bob.buffers.createBuffer(f32("f" + s.substring(1), 4)).getBuffer());
        assertEquals(Status.Code.NOT_FOUND, stolen.getCode());
        assertEquals(unknown.getDescription().replace("\"f", "\"" + s.charAt(0)), stolen.getDescription());
        assertEquals("alice", f.server.scheduler().sessions().iterator().next().tenant());
    }

    @Test
    void theTokenFileIsReloadedWhenItChanges() throws Exception {
        String carol = "carol-token-0123456789abcdef";
        var c = f.client(carol);
        assertEquals(Status.Code.UNAUTHENTICATED, status(() -> c.openSession(0)).getCode());
        Files.writeString(f.tokens, TenantFixture.BOB + " bob\n" + carol + " carol\n");
        Files.setLastModifiedTime(f.tokens, FileTime.fromMillis(System.currentTimeMillis() + 5_000));
        f.clock.advance(1_001, TimeUnit.MILLISECONDS);
        c.openSession(0); // carol is in
        assertEquals(Status.Code.UNAUTHENTICATED, status(() -> alice.openSession(0)).getCode(), "alice was removed");
        // a broken file keeps the previous tokens
        Files.writeString(f.tokens, "garbage\n");
        Files.setLastModifiedTime(f.tokens, FileTime.fromMillis(System.currentTimeMillis() + 10_000));
        f.clock.advance(1_001, TimeUnit.MILLISECONDS);
        c.openSession(0);
    }

    @Test
    void quotasAreEnforcedAndNamed() {
        String s = alice.openSession(0);
        alice.buffers.createBuffer(f32(s, 200_000)).getBuffer(); // 800 000 of 1 MiB
        Status mem = status(() -> alice.buffers.createBuffer(f32(s, 100_000)).getBuffer());
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, mem.getCode());
        assertEquals("tenant alice: device memory quota 1048576 bytes exceeded (in use 800000, requested 400000)",
                mem.getDescription());
        alice.exec.createStream(CreateStreamRequest.newBuilder().setSession(s).build());
        Status streams = status(() -> alice.exec.createStream(CreateStreamRequest.newBuilder().setSession(s).build()));
        assertEquals("tenant alice: streams quota 1 streams exceeded (in use 1, requested 1)", streams.getDescription());
        BufferInfo b = alice.buffers.createBuffer(f32(s, 1000)).getBuffer();
        SubmitRequest.Builder many = SubmitRequest.newBuilder().setSession(s);
        for (int i = 0; i < 101; i++) {
            many.addCommands(Command.newBuilder().setUpload(Upload.newBuilder().setBuffer(b.getBuffer())
                    .setData(ByteString.copyFrom(new byte[4]))));
        }
        Status inflight = status(() -> alice.exec.submit(many.build()));
        assertEquals("tenant alice: in-flight commands quota 100 commands exceeded (in use 0, requested 101)",
                inflight.getDescription());
        Status message = status(() -> alice.exec.submit(SubmitRequest.newBuilder().setSession(s).addCommands(
                Command.newBuilder().setUpload(Upload.newBuilder().setBuffer(b.getBuffer())
                        .setData(ByteString.copyFrom(new byte[3 << 20])))).build()));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, message.getCode());
        assertTrue(message.getDescription().startsWith("tenant alice: message size quota 2097152 bytes exceeded"),
                message.getDescription());
        // bob has no quotas: the same requests pass
        String t = bob.openSession(0);
        bob.buffers.createBuffer(f32(t, 1_000_000)).getBuffer();
    }
}
