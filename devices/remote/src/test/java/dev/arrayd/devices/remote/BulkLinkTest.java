package dev.arrayd.devices.remote;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.proto.v1.ReadBufferRequest;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The reading side of the bulk port against a bulk port played by the test: the bytes handed on in order at their
 * offsets, the peer's failures with their codes, a connection that cannot be made told apart from one that breaks
 * (the first may go through gRPC instead, the second is UNAVAILABLE), and an idle connection the peer closed
 * replaced without the caller seeing it.
 */
@Timeout(30)
class BulkLinkTest {

    static final byte[] KEY = new byte[BulkProtocol.KEY_BYTES];

    /** How the played bulk port answers one connection: after its greeting, each request in turn. */
    interface Script {
        /** Answers {@code req} (the connection's {@code n}-th); false closes the connection instead. */
        boolean answer(int n, ReadBufferRequest req, DataOutputStream out) throws IOException;
    }

    private final ServerSocket server;
    private final List<Thread> threads = new ArrayList<>();
    final AtomicInteger accepted = new AtomicInteger();

    BulkLinkTest() throws IOException {
        server = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
    }

    @AfterEach
    void close() throws Exception {
        server.close();
        for (Thread t : threads) {
            t.join(5_000);
        }
    }

    /** Plays a bulk port: {@code greet} false closes each connection at once. */
    private void play(boolean greet, Script script) {
        Thread t = Thread.ofVirtual().start(() -> {
            while (true) {
                Socket s;
                try {
                    s = server.accept();
                } catch (IOException e) {
                    return;
                }
                accepted.incrementAndGet();
                Thread.ofVirtual().start(() -> serve(s, greet, script));
            }
        });
        threads.add(t);
    }

    private static void serve(Socket s, boolean greet, Script script) {
        try (s) {
            if (!greet) {
                return;
            }
            DataInputStream in = new DataInputStream(s.getInputStream());
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            byte[] hello = in.readNBytes(8 + BulkProtocol.KEY_BYTES);
            assertArrayEquals(BulkProtocol.hello(KEY).array(), hello);
            out.write(BulkProtocol.ACCEPTED);
            out.flush();
            for (int n = 0; ; n++) {
                int length = in.readInt();
                ReadBufferRequest req = ReadBufferRequest.parseFrom(in.readNBytes(length));
                if (!script.answer(n, req, out)) {
                    return;
                }
                out.flush();
            }
        } catch (IOException e) {
            // the reader closed it
        }
    }

    private BulkLink link() {
        return new BulkLink("p", new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()), KEY);
    }

    /** The bytes a read hands on, checked to come in order, each chunk at most {@link BulkLink#CHUNK} bytes. */
    private static byte[] read(BulkLink l, long offset, int size, long base) {
        byte[] got = new byte[size];
        long[] next = {base};
        l.read("s", 5, offset, size, base, (at, data, release) -> {
            assertEquals(next[0], at, "in order");
            int n = data.remaining();
            assertTrue(n <= BulkLink.CHUNK, n + " bytes");
            data.get(got, (int) (at - base), n);
            next[0] = at + n;
            release.run();
        });
        return got;
    }

    private static byte[] bytes(long offset, int size) {
        byte[] b = new byte[size];
        new Random(offset).nextBytes(b);
        return b;
    }

    private static boolean data(ReadBufferRequest req, DataOutputStream out) throws IOException {
        out.writeLong(req.getSizeBytes());
        out.write(bytes(req.getOffsetBytes(), (int) req.getSizeBytes()));
        return true;
    }

    @Test
    void aReadHandsOnTheRangeInChunksAtTheirOffsetsAndKeepsTheConnection() {
        play(true, (n, req, out) -> {
            assertEquals("s", req.getSession());
            assertEquals(5, req.getBuffer());
            return data(req, out);
        });
        try (BulkLink l = link()) {
            int size = (5 << 19) + 7; // two and a half chunks and a bit
            assertArrayEquals(bytes(123, size), read(l, 123, size, 1000));
            assertArrayEquals(bytes(9, 10), read(l, 9, 10, 0));
            assertEquals(1, accepted.get(), "one connection, kept for the next read");
        }
    }

    @Test
    void aFailureThePeerAnswersKeepsItsCodeAndTheConnectionGoesOn() {
        play(true, (n, req, out) -> {
            if (n == 0) {
                out.write(BulkProtocol.failure(io.grpc.Status.Code.OUT_OF_RANGE.value(), "read: bytes [9, +10)").array());
                return true;
            }
            return data(req, out);
        });
        try (BulkLink l = link()) {
            ArraydException e = assertThrows(ArraydException.class, () -> read(l, 9, 10, 0));
            assertFalse(e instanceof BulkLink.NoConnection);
            assertEquals(ErrorCode.OUT_OF_RANGE, e.code());
            assertEquals("peer p: read: bytes [9, +10)", e.getMessage());
            assertArrayEquals(bytes(9, 10), read(l, 9, 10, 0));
            assertEquals(1, accepted.get());
        }
    }

    @Test
    void aPortThatTakesNoConnectionIsToldApartFromOneThatBreaks() {
        play(false, (n, req, out) -> true);
        try (BulkLink l = link()) {
            assertInstanceOf(BulkLink.NoConnection.class, assertThrows(ArraydException.class, () -> read(l, 0, 10, 0)));
        }
    }

    @Test
    void aConnectionThatBreaksInTheMiddleIsUnavailable() {
        play(true, (n, req, out) -> {
            out.writeLong(req.getSizeBytes());
            out.write(new byte[(int) req.getSizeBytes() / 2]);
            return false;
        });
        try (BulkLink l = link()) {
            ArraydException e = assertThrows(ArraydException.class, () -> read(l, 0, 3 << 20, 0));
            assertFalse(e instanceof BulkLink.NoConnection, e.toString());
            assertEquals(ErrorCode.UNAVAILABLE, e.code());
            assertTrue(e.getMessage().startsWith("peer p ("), e.getMessage());
        }
    }

    @Test
    void anIdleConnectionThePeerClosedIsReplaced() {
        play(true, (n, req, out) -> n == 0 && data(req, out)); // each connection answers one read, then closes
        try (BulkLink l = link()) {
            assertArrayEquals(bytes(1, 100), read(l, 1, 100, 0));
            assertArrayEquals(bytes(2, 100), read(l, 2, 100, 0));
            assertEquals(2, accepted.get());
        }
    }

    @Test
    void aClosedLinkReadsNoMore() {
        play(true, (n, req, out) -> data(req, out));
        BulkLink l = link();
        l.close();
        ArraydException e = assertThrows(ArraydException.class, () -> read(l, 0, 10, 0));
        assertEquals(ErrorCode.UNAVAILABLE, e.code());
    }
}
