package dev.arrayd.server;

import static dev.arrayd.server.Protos.f32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.arrayd.proto.v1.BufferInfo;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.Copy;
import dev.arrayd.proto.v1.DestroyBufferRequest;
import dev.arrayd.proto.v1.Fill;
import dev.arrayd.proto.v1.OpenSharedBufferRequest;
import dev.arrayd.proto.v1.OpenSharedBufferResponse;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.Scalar;
import dev.arrayd.proto.v1.ShareBufferRequest;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.Upload;
import dev.arrayd.proto.v1.WaitEventsRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A buffer shared with another tenant by capability: reads allowed, writes refused when read-only, refcounted memory. */
class SharingTest {

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

    static Status status(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run).getStatus();
    }

    static Command upload(long buffer, float v) {
        byte[] d = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putFloat(v).putFloat(v).putFloat(v).putFloat(v).array();
        return Command.newBuilder().setUpload(Upload.newBuilder().setBuffer(buffer).setData(ByteString.copyFrom(d))).build();
    }

    @Test
    void readOnlyCapabilityLetsAnotherTenantReadButNotWrite() {
        String a = alice.openSession(0);
        String b = bob.openSession(0);
        BufferInfo buf = alice.buffers.createBuffer(f32(a, 4)).getBuffer();
        var ev = alice.exec.submit(SubmitRequest.newBuilder().setSession(a).addCommands(upload(buf.getBuffer(), 2.5f)).build());
        alice.exec.waitEvents(WaitEventsRequest.newBuilder().setSession(a).addAllEvents(ev.getEventsList()).build());
        String cap = alice.sharing.shareBuffer(ShareBufferRequest.newBuilder().setSession(a).setBuffer(buf.getBuffer())
                .setReadOnly(true).setTenant("bob").build()).getCapability();
        // another tenant than the one named: the same NOT_FOUND as a made-up capability
        String a2 = alice.openSession(0);
        assertEquals(Status.Code.NOT_FOUND, status(() -> alice.sharing.openSharedBuffer(
                OpenSharedBufferRequest.newBuilder().setSession(a2).setCapability(cap).build())).getCode());
        assertEquals(Status.Code.NOT_FOUND, status(() -> bob.sharing.openSharedBuffer(
                OpenSharedBufferRequest.newBuilder().setSession(b).setCapability("0".repeat(32)).build())).getCode());
        OpenSharedBufferResponse opened = bob.sharing.openSharedBuffer(
                OpenSharedBufferRequest.newBuilder().setSession(b).setCapability(cap).build());
        assertTrue(opened.getReadOnly());
        long h = opened.getInfo().getBuffer();
        // read: the owner's data
        var chunks = bob.buffers.readBuffer(ReadBufferRequest.newBuilder().setSession(b).setBuffer(h).build());
        float first = chunks.next().getData().asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN).getFloat();
        assertEquals(2.5f, first);
        // writes of every kind: PERMISSION_DENIED
        BufferInfo mine = bob.buffers.createBuffer(f32(b, 4)).getBuffer();
        for (Command c : new Command[] {upload(h, 1f),
                Command.newBuilder().setFill(Fill.newBuilder().setBuffer(h).setValue(Scalar.newBuilder().setF32(1))).build(),
                Command.newBuilder().setCopy(Copy.newBuilder().setSrc(mine.getBuffer()).setDst(h)).build()}) {
            Status s = status(() -> bob.exec.submit(SubmitRequest.newBuilder().setSession(b).addCommands(c).build()));
            assertEquals(Status.Code.PERMISSION_DENIED, s.getCode(), s.toString());
        }
        // copying out of it is a read: allowed
        bob.exec.submit(SubmitRequest.newBuilder().setSession(b).addCommands(Command.newBuilder()
                .setCopy(Copy.newBuilder().setSrc(h).setDst(mine.getBuffer()))).build());
        // the owner destroys its handle: bob's still works; memory goes when bob's goes
        alice.buffers.destroyBuffer(DestroyBufferRequest.newBuilder().setSession(a).setBuffer(buf.getBuffer()).build());
        bob.buffers.readBuffer(ReadBufferRequest.newBuilder().setSession(b).setBuffer(h).build()).next();
        bob.buffers.destroyBuffer(DestroyBufferRequest.newBuilder().setSession(b).setBuffer(h).build());
        bob.buffers.destroyBuffer(DestroyBufferRequest.newBuilder().setSession(b).setBuffer(mine.getBuffer()).build());
        f.assertPoolsEmpty();
    }

    @Test
    void readWriteCapabilityAllowsWrites() {
        String a = alice.openSession(0);
        String b = bob.openSession(0);
        BufferInfo buf = alice.buffers.createBuffer(f32(a, 4)).getBuffer();
        String cap = alice.sharing.shareBuffer(ShareBufferRequest.newBuilder().setSession(a).setBuffer(buf.getBuffer())
                .build()).getCapability();
        long h = bob.sharing.openSharedBuffer(OpenSharedBufferRequest.newBuilder().setSession(b).setCapability(cap)
                .build()).getInfo().getBuffer();
        var ev = bob.exec.submit(SubmitRequest.newBuilder().setSession(b).addCommands(upload(h, 7f)).build());
        bob.exec.waitEvents(WaitEventsRequest.newBuilder().setSession(b).addAllEvents(ev.getEventsList()).build());
        float v = alice.buffers.readBuffer(ReadBufferRequest.newBuilder().setSession(a).setBuffer(buf.getBuffer()).build())
                .next().getData().asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN).getFloat();
        assertEquals(7f, v);
    }
}
