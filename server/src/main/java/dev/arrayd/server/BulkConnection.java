package dev.arrayd.server;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Quote;
import dev.arrayd.devices.api.support.DirectBufferPool;
import dev.arrayd.devices.remote.BulkProtocol;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.scheduler.Buffer;
import dev.arrayd.scheduler.CommandSpec;
import dev.arrayd.scheduler.Event;
import io.grpc.Status;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection to the {@link BulkPort}: its greeting, then its reads one after the other, each a download of one
 * window of the key's session into native memory (ordered after the buffer's latest writer, like a
 * {@code ReadBuffer}), sent from there as it is. A connection that breaks the protocol is closed; a read that fails
 * answers its status and the connection goes on.
 */
final class BulkConnection {

    private static final Logger log = LoggerFactory.getLogger(BulkConnection.class);
    private static final ThrottledLog refusals = new ThrottledLog(log, java.util.concurrent.TimeUnit.SECONDS.toNanos(10));

    /** How long a new connection has to present its key. */
    static final int HELLO_MILLIS = 5_000;
    /** How long an admitted connection may wait between reads before it is closed. */
    static final int IDLE_MILLIS = 600_000;

    /** Native windows reads are downloaded into, kept for the next read. */
    private static final DirectBufferPool WINDOWS = new DirectBufferPool(BulkProtocol.MAX_READ_BYTES, 4);

    private final BulkPort port;
    private final SocketChannel ch;

    BulkConnection(BulkPort port, SocketChannel ch) {
        this.port = port;
        this.ch = ch;
    }

    void serve() {
        String from = "?";
        boolean admitted = false;
        try {
            from = String.valueOf(ch.getRemoteAddress());
            ch.socket().setTcpNoDelay(true);
            ch.socket().setSoTimeout(HELLO_MILLIS);
            DataInputStream in = new DataInputStream(ch.socket().getInputStream());
            BulkPort.Grant grant = hello(in);
            if (grant == null) {
                refuse(from, "no valid greeting or key");
                return;
            }
            BulkProtocol.writeFully(ch, ByteBuffer.wrap(new byte[] {BulkProtocol.ACCEPTED}));
            admitted = true;
            ch.socket().setSoTimeout(IDLE_MILLIS);
            while (true) {
                int length;
                try {
                    length = in.readInt();
                } catch (EOFException e) {
                    return; // the peer is done with it
                }
                if (length < 1 || length > BulkProtocol.MAX_REQUEST_BYTES) {
                    refuse(from, "a request of " + Integer.toUnsignedString(length) + " bytes (expected: 1 to "
                            + BulkProtocol.MAX_REQUEST_BYTES + ")");
                    return;
                }
                byte[] request = in.readNBytes(length);
                if (request.length != length) {
                    return;
                }
                read(grant, request);
            }
        } catch (SocketTimeoutException e) {
            if (!admitted) {
                refuse(from, "no greeting within " + HELLO_MILLIS + " ms");
            } else {
                log.debug("bulk port: closed an idle connection from {}", from);
            }
        } catch (IOException e) {
            if (!admitted) {
                refuse(from, "the connection broke before its greeting (" + e + ")");
            } else {
                log.debug("bulk port: connection from {} ended: {}", from, e.toString());
            }
        }
    }

    /** Counts and logs (at most a line per 10 s) a connection closed without being served. */
    private void refuse(String from, String why) {
        port.refused.increment();
        refusals.warn("bulk port: closed a connection from " + from + ": " + why);
    }

    /** The grant of the greeting's key, or null when the greeting is anything else. */
    private BulkPort.Grant hello(DataInputStream in) throws IOException {
        byte[] hello = in.readNBytes(8 + BulkProtocol.KEY_BYTES);
        if (hello.length != 8 + BulkProtocol.KEY_BYTES) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(hello);
        if (b.getInt() != BulkProtocol.MAGIC || b.getInt() != BulkProtocol.VERSION) {
            return null;
        }
        byte[] key = new byte[BulkProtocol.KEY_BYTES];
        b.get(key);
        return port.grant(key);
    }

    /** Serves one read: its bytes, or its failure's status. */
    private void read(BulkPort.Grant grant, byte[] request) throws IOException {
        ByteBuffer window = null;
        InFlightCall quota = null;
        try {
            ReadBufferRequest req = ReadBufferRequest.parseFrom(request);
            if (!req.getSession().equals(grant.session())) {
                throw new ArraydException(ErrorCode.PERMISSION_DENIED, "session: " + Quote.string(req.getSession())
                        + " (expected: the session whose key opened this connection)");
            }
            SessionLease l = port.sessions().lease(req.getSession(), grant.tenant());
            Buffer b = port.scheduler().buffer(l.session, req.getBuffer());
            long offset = Wire.size(req.getOffsetBytes(), "offset_bytes");
            long size = Wire.size(req.getSizeBytes(), "size_bytes");
            if (size < 1 || size > BulkProtocol.MAX_READ_BYTES) {
                throw ArraydException.invalid("size_bytes: " + size + " (expected: 1 to " + BulkProtocol.MAX_READ_BYTES
                        + " on the bulk port)");
            }
            long whole = BufferGrpcService.addressableBytes(b, req.getWholePadded());
            if (offset > whole - size || size > whole) {
                throw new ArraydException(ErrorCode.OUT_OF_RANGE, "read: bytes [" + offset + ", +" + size
                        + ") (expected: within the " + whole + " bytes of " + b + ")");
            }
            long[] waits = Wire.events(req.getWaitEventsList(), "wait_events");
            quota = InFlightCall.reserve(l, "bulk read");
            window = WINDOWS.take();
            Event e = port.scheduler().submit(l.session, new CommandSpec(0, waits, 0, new CommandSpec.DownloadOp(
                    b.handle(), offset, size, BulkProtocol.MAX_READ_BYTES, MemorySegment.ofBuffer(window),
                    req.getWholePadded())), null);
            CompletableFuture<Event> done = new CompletableFuture<>();
            e.onDone(done::complete);
            done.join();
            quota.release(); // (downloaded: a slow reader of the bytes holds no place in the quota)
            if (e.isFailed()) {
                throw e.failure();
            }
            BulkProtocol.writeFully(ch, ByteBuffer.allocate(8).putLong(0, size));
            BulkProtocol.writeFully(ch, window.slice(0, (int) size));
            port.sent.increment(size);
        } catch (InvalidProtocolBufferException x) {
            fail(Status.INVALID_ARGUMENT.withDescription("request: not a ReadBufferRequest (" + x.getMessage() + ")"));
        } catch (RuntimeException x) {
            fail(StatusMapper.toStatus(x));
        } finally {
            if (quota != null) {
                quota.release();
            }
            if (window != null) {
                WINDOWS.give(window); // (the download is done: it was waited for)
            }
        }
    }

    private void fail(Status s) throws IOException {
        BulkProtocol.writeFully(ch, BulkProtocol.failure(s.getCode().value(),
                s.getDescription() == null ? s.getCode().name() : s.getDescription()));
    }
}
