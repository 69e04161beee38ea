package dev.arrayd.devices.remote;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;

/**
 * The byte stream of a daemon's bulk port: how one peer reads ranges of another's buffers without gRPC's framing.
 * Every integer is big-endian.
 * <ol>
 * <li>The client opens a TCP connection and sends {@link #MAGIC} and the 32-byte key that
 * {@code PeerService.OpenBulkLink} gave its session; the server answers one byte, {@link #ACCEPTED}, or closes.
 * <li>Then, any number of times, one after the other: the client sends a request, an {@code int32} length (1 to
 * {@link #MAX_REQUEST_BYTES}) and that many bytes of an encoded {@code ReadBufferRequest} of the key's session (at
 * most {@link #MAX_READ_BYTES} bytes); the server answers an {@code int64}: {@code n >= 0} and the range's
 * {@code n} bytes, or {@link #FAILED} and an {@code int32} gRPC status code, an {@code int32} length (at most
 * {@link #MAX_MESSAGE_BYTES}) and that many bytes of UTF-8 message.
 * </ol>
 * A read is the same as a {@code ReadBuffer} of one window: it waits for the buffer's latest writer and sends a
 * snapshot. The server closes a connection that sends anything else, or nothing for a while.
 */
public final class BulkProtocol {

    private BulkProtocol() {}

    /** What a connection starts with: "ARDB" and the protocol's version. */
    public static final int MAGIC = 0x41524442;
    public static final int VERSION = 1;
    public static final int KEY_BYTES = 32;
    public static final byte ACCEPTED = 1;
    public static final long FAILED = -1;
    public static final int MAX_REQUEST_BYTES = 4096;
    /** Most bytes one request reads. */
    public static final int MAX_READ_BYTES = 8 << 20;
    public static final int MAX_MESSAGE_BYTES = 1024;

    /** The greeting: magic, version, key. */
    public static ByteBuffer hello(byte[] key) {
        if (key.length != KEY_BYTES) {
            throw new IllegalArgumentException("key of " + key.length + " bytes (expected: " + KEY_BYTES + ")");
        }
        return ByteBuffer.allocate(8 + KEY_BYTES).putInt(MAGIC).putInt(VERSION).put(key).flip();
    }

    /** A failure's frame: {@code message} cut to {@link #MAX_MESSAGE_BYTES} bytes at a character's boundary. */
    public static ByteBuffer failure(int code, String message) {
        byte[] m = message.getBytes(StandardCharsets.UTF_8);
        int n = m.length;
        if (n > MAX_MESSAGE_BYTES) {
            n = MAX_MESSAGE_BYTES;
            while (n > 0 && (m[n] & 0xC0) == 0x80) {
                n--; // (not inside a character's bytes)
            }
        }
        return ByteBuffer.allocate(16 + n).putLong(FAILED).putInt(code).putInt(n).put(m, 0, n).flip();
    }

    /** Reads exactly {@code b.remaining()} bytes; EOFException if the stream ends first. */
    public static void readFully(ReadableByteChannel in, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (in.read(b) < 0) {
                throw new EOFException("the connection closed " + b.remaining() + " bytes early");
            }
        }
    }

    /** Writes all of {@code b}. */
    public static void writeFully(WritableByteChannel out, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            out.write(b);
        }
    }
}
