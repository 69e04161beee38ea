package dev.arrayd.server;

import static dev.arrayd.server.Protos.f32;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.arrayd.devices.remote.BulkProtocol;
import dev.arrayd.proto.v1.CloseSessionRequest;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.OpenBulkLinkRequest;
import dev.arrayd.proto.v1.OpenBulkLinkResponse;
import dev.arrayd.proto.v1.PeerServiceGrpc;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.Upload;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The bulk port a peer reads buffers through: what a key lets in (one session, its tenant's), reads that match the
 * buffer's bytes, and every malformed or foreign request refused with its status or a closed connection.
 */
@Timeout(60)
class BulkPortTest {

    static final int FLOATS = 3 << 20 >> 2; // 3 MiB

    TenantFixture f;
    TenantFixture.Client bob;
    TenantFixture.Client alice;
    String session;
    long buffer;
    byte[] bytes;
    OpenBulkLinkResponse link;

    @BeforeEach
    void setUp() throws IOException {
        f = new TenantFixture();
        bob = f.client(TenantFixture.BOB);
        alice = f.client(TenantFixture.ALICE);
        session = bob.openSession(0);
        buffer = bob.buffers.createBuffer(f32(session, FLOATS)).getBuffer().getBuffer();
        bytes = new byte[FLOATS * 4];
        new Random(7).nextBytes(bytes);
        SubmitRequest.Builder w = SubmitRequest.newBuilder().setSession(session);
        for (int o = 0; o < bytes.length; o += 1 << 20) {
            w.addCommands(Command.newBuilder().setUpload(Upload.newBuilder().setBuffer(buffer).setOffsetBytes(o)
                    .setData(ByteString.copyFrom(bytes, o, 1 << 20))));
        }
        bob.exec.submit(w.build());
        link = PeerServiceGrpc.newBlockingStub(bob.channel).openBulkLink(OpenBulkLinkRequest.newBuilder()
                .setSession(session).build());
    }

    @AfterEach
    void tearDown() throws Exception {
        f.close();
    }

    /** A connection to the bulk port that has presented {@code key}. */
    private Socket connect(byte[] key) throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), link.getPort());
        s.setSoTimeout(20_000);
        s.getOutputStream().write(BulkProtocol.hello(key).array());
        return s;
    }

    private static boolean accepted(Socket s) throws IOException {
        return s.getInputStream().read() == BulkProtocol.ACCEPTED;
    }

    private static void request(Socket s, byte[] request) throws IOException {
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        out.writeInt(request.length);
        out.write(request);
        out.flush();
    }

    private ReadBufferRequest.Builder read(long offset, long size) {
        return ReadBufferRequest.newBuilder().setSession(session).setBuffer(buffer).setOffsetBytes(offset)
                .setSizeBytes(size);
    }

    /** The answer's bytes, or its failure as a status. */
    private static byte[] answer(Socket s) throws IOException {
        DataInputStream in = new DataInputStream(s.getInputStream());
        long n = in.readLong();
        if (n == BulkProtocol.FAILED) {
            int code = in.readInt();
            byte[] m = in.readNBytes(in.readInt());
            throw Status.fromCodeValue(code).withDescription(new String(m, StandardCharsets.UTF_8)).asRuntimeException();
        }
        return in.readNBytes(Math.toIntExact(n));
    }

    /** The server closed {@code s} without a byte of answer (an end of stream, or a reset: bytes were left unread). */
    private static void assertClosed(Socket s, String why) {
        try {
            assertEquals(-1, s.getInputStream().read(), why);
        } catch (java.net.SocketException reset) {
            assertTrue(String.valueOf(reset.getMessage()).contains("reset"), why + ": " + reset);
        } catch (IOException e) {
            throw new AssertionError(why + ": " + e, e);
        }
    }

    private static Status failure(Socket s) {
        return assertThrows(StatusRuntimeException.class, () -> answer(s)).getStatus();
    }

    @Test
    void readsTheBufferSBytesOneAfterTheOtherOnOneConnection() throws IOException {
        assertEquals(32, link.getKey().size());
        try (Socket s = connect(link.getKey().toByteArray())) {
            assertTrue(accepted(s));
            request(s, read(1000, 2 << 20).build().toByteArray());
            assertArrayEquals(java.util.Arrays.copyOfRange(bytes, 1000, 1000 + (2 << 20)), answer(s));
            request(s, read(0, bytes.length).build().toByteArray());
            assertArrayEquals(bytes, answer(s));
            assertEquals(1.0, meter("arrayd.peer.bulk.connections"));
        }
        double sent = (2 << 20) + bytes.length;
        assertEquals(sent, meterReaching("arrayd.peer.bulk.sent", sent), "bytes sent");
        // the same session gets the same key again
        assertEquals(link.getKey(), PeerServiceGrpc.newBlockingStub(bob.channel).openBulkLink(OpenBulkLinkRequest
                .newBuilder().setSession(session).build()).getKey());
    }

    @Test
    void aReadThatFailsAnswersItsStatusAndTheConnectionGoesOn() throws IOException {
        try (Socket s = connect(link.getKey().toByteArray())) {
            assertTrue(accepted(s));
            request(s, read(bytes.length - 10, 11).build().toByteArray());
            Status range = failure(s);
            assertEquals(Status.Code.OUT_OF_RANGE, range.getCode());
            assertTrue(range.getDescription().contains("[" + (bytes.length - 10) + ", +11)"), range.getDescription());
            request(s, read(0, BulkProtocol.MAX_READ_BYTES + 1L).build().toByteArray());
            assertEquals(Status.Code.INVALID_ARGUMENT, failure(s).getCode());
            request(s, read(0, 0).build().toByteArray());
            assertEquals(Status.Code.INVALID_ARGUMENT, failure(s).getCode());
            request(s, read(0, 4).setBuffer(buffer + 12345).build().toByteArray());
            assertEquals(Status.Code.NOT_FOUND, failure(s).getCode());
            request(s, new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff});
            Status garbage = failure(s);
            assertEquals(Status.Code.INVALID_ARGUMENT, garbage.getCode());
            assertTrue(garbage.getDescription().startsWith("request: not a ReadBufferRequest"), garbage.getDescription());
            // a session other than the key's, even one of the same tenant
            String other = bob.openSession(0);
            request(s, read(0, 4).setSession(other).build().toByteArray());
            Status foreign = failure(s);
            assertEquals(Status.Code.PERMISSION_DENIED, foreign.getCode());
            // still serving
            request(s, read(8, 8).build().toByteArray());
            assertArrayEquals(java.util.Arrays.copyOfRange(bytes, 8, 16), answer(s));
        }
    }

    @Test
    void aConnectionWithoutTheKeyOrWithAnOversizedRequestIsClosed() throws IOException {
        byte[] wrong = link.getKey().toByteArray();
        wrong[0] ^= 1;
        try (Socket s = connect(wrong)) {
            assertClosed(s, "closed without an answer");
        }
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), link.getPort())) {
            s.setSoTimeout(20_000);
            s.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n0123456789abcdef0123".getBytes(StandardCharsets.US_ASCII));
            assertClosed(s, "not a greeting: closed");
        }
        try (Socket s = connect(link.getKey().toByteArray())) {
            assertTrue(accepted(s));
            new DataOutputStream(s.getOutputStream()).writeInt(BulkProtocol.MAX_REQUEST_BYTES + 1);
            assertClosed(s, "a request over the limit closes the connection");
        }
        assertEquals(3.0, meterReaching("arrayd.peer.bulk.refused", 3), "each counted");
    }

    /**
     * The meter's value once it reached {@code value}, or whatever it is after 10 s: the connection's thread counts
     * what it sent or refused, maybe just after the client saw the bytes or the close.
     */
    private double meterReaching(String name, double value) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        double v;
        while ((v = meter(name)) < value && System.nanoTime() < deadline) {
            Thread.yield();
        }
        return v;
    }

    private double meter(String name) {
        var m = f.server.metrics().registry().find(name).meter();
        assertTrue(m != null, name + " registered");
        return m.measure().iterator().next().getValue();
    }

    @Test
    void theKeyIsTheSessionSAndDiesWithIt() throws IOException {
        // another tenant cannot open a link to bob's session
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> PeerServiceGrpc.newBlockingStub(
                alice.channel).openBulkLink(OpenBulkLinkRequest.newBuilder().setSession(session).build()));
        assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
        bob.sessions.closeSession(CloseSessionRequest.newBuilder().setSession(session).build());
        try (Socket s = connect(link.getKey().toByteArray())) {
            assertClosed(s, "the closed session's key is refused");
        }
    }
}
