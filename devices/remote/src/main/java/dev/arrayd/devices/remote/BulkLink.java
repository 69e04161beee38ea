package dev.arrayd.devices.remote;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.support.DirectBufferPool;
import dev.arrayd.devices.api.support.GuardedBy;
import dev.arrayd.proto.v1.OpenBulkLinkRequest;
import dev.arrayd.proto.v1.PeerServiceGrpc;
import dev.arrayd.proto.v1.ReadBufferRequest;
import io.grpc.Status;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.Semaphore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This daemon's way into one peer's bulk port ({@link BulkProtocol}), for one connection of the link (its key is its
 * session's): reads of the peer's buffers as plain byte streams, one connection per read in flight (at most
 * {@link #MAX_CONNECTIONS}), kept open for the next read. Only for a plaintext link: a link with TLS reads through
 * gRPC, and so does a read for which no connection could be made.
 */
final class BulkLink implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(BulkLink.class);

    /** Bytes handed on at a time: each its own upload on this side. */
    static final int CHUNK = 1 << 20;
    /** Chunks of one read that may wait for their upload at once. */
    static final int CHUNKS_IN_FLIGHT = 8;
    /** How long connecting to the bulk port may take. */
    static final int CONNECT_MILLIS = 3_000;
    /** Most connections to the peer's bulk port at once (one per piece of a read in flight); more reads wait. */
    static final int MAX_CONNECTIONS = PeerReads.IN_FLIGHT;

    private static final DirectBufferPool BUFFERS = new DirectBufferPool(CHUNK, 32);

    private final String peer;
    private final InetSocketAddress address;
    private final byte[] key;
    @GuardedBy("this")
    private final ArrayDeque<SocketChannel> idle = new ArrayDeque<>();
    @GuardedBy("this")
    private final java.util.Set<SocketChannel> open = new java.util.HashSet<>();
    @GuardedBy("this")
    private boolean closed;
    private final Semaphore connections = new Semaphore(MAX_CONNECTIONS);

    BulkLink(String peer, InetSocketAddress address, byte[] key) {
        this.peer = peer;
        this.address = address;
        this.key = key;
    }

    /**
     * The bulk link of {@code c}, opened on first use; null when the link has TLS, reaches the peer other than by
     * host and port, or the peer has no bulk port or cannot be reached on it (then every read goes through gRPC).
     */
    static BulkLink of(PeerLink link, PeerLink.Connection c) {
        var slot = c.bulk();
        synchronized (slot) {
            if (slot.tried) {
                return slot.link;
            }
            slot.tried = true;
            slot.link = open(link, c);
            return slot.link;
        }
    }

    private static BulkLink open(PeerLink link, PeerLink.Connection c) {
        if (link.options().tls() != null) {
            return null;
        }
        String target = link.target();
        int colon = target.lastIndexOf(':');
        if (target.contains("://") || colon <= 0) {
            return null;
        }
        String host = target.substring(0, colon).replace("[", "").replace("]", "");
        var answer = PeerServiceGrpc.newFutureStub(c.channel()).openBulkLink(OpenBulkLinkRequest.newBuilder()
                .setSession(c.session().id()).build());
        dev.arrayd.proto.v1.OpenBulkLinkResponse r;
        try {
            r = link.await(c, PeerReads.toCompletable(answer));
        } catch (ArraydException e) {
            log.info("peer {}: reads through gRPC ({})", link.name(), e.getMessage());
            return null;
        }
        BulkLink b = new BulkLink(link.name(), new InetSocketAddress(host, r.getPort()), r.getKey().toByteArray());
        try {
            b.release(b.connect()); // reachable: the connection is kept for the first read
        } catch (IOException e) {
            log.warn("peer {}: its bulk port {}:{} does not answer ({}): reads go through gRPC", link.name(), host,
                    r.getPort(), e.toString());
            return null;
        }
        log.info("peer {}: reads through its bulk port {}:{}", link.name(), host, r.getPort());
        return b;
    }

    /**
     * Reads {@code size} bytes (at most {@link BulkProtocol#MAX_READ_BYTES}) from {@code offset} of buffer
     * {@code handle} of {@code session} on the peer, handing them to {@code sink} in chunks of {@link #CHUNK} bytes at
     * {@code base} plus their place in the read. Blocks until the last chunk is handed on. A failure the peer answers
     * is an {@link ArraydException} with its code; a broken connection is UNAVAILABLE.
     */
    long read(String session, long handle, long offset, long size, long base, PeerReads.ChunkSink sink) {
        connections.acquireUninterruptibly();
        try {
            return readOnAConnection(session, handle, offset, size, base, sink);
        } finally {
            connections.release();
        }
    }

    private long readOnAConnection(String session, long handle, long offset, long size, long base,
            PeerReads.ChunkSink sink) {
        byte[] request = ReadBufferRequest.newBuilder().setSession(session).setBuffer(handle).setOffsetBytes(offset)
                .setSizeBytes(size).build().toByteArray();
        for (int attempt = 0; ; attempt++) {
            SocketChannel ch;
            boolean reused;
            try {
                synchronized (this) {
                    if (closed) {
                        throw unavailable("the link closed");
                    }
                    ch = idle.poll();
                }
                reused = ch != null;
                if (ch == null) {
                    ch = connect();
                }
            } catch (IOException e) {
                throw new NoConnection(peer, e);
            }
            long header;
            try {
                BulkProtocol.writeFully(ch, ByteBuffer.allocate(4 + request.length).putInt(request.length).put(request)
                        .flip());
                ByteBuffer h = ByteBuffer.allocate(8);
                BulkProtocol.readFully(ch, h);
                header = h.getLong(0);
            } catch (IOException e) {
                drop(ch);
                if (reused && attempt == 0) {
                    continue; // the peer closed an idle connection: once more on a new one
                }
                throw unavailable("bulk port: " + e);
            }
            try {
                if (header == BulkProtocol.FAILED) {
                    ArraydException failure = failure(ch);
                    release(ch);
                    throw failure;
                }
                if (header != size) {
                    drop(ch);
                    throw new ArraydException(ErrorCode.INTERNAL, "peer " + peer + ": bulk port answered " + header
                            + " bytes (expected: " + size + ")");
                }
                receive(ch, size, base, sink);
                release(ch);
                return size;
            } catch (IOException e) {
                drop(ch);
                throw unavailable("bulk port: " + e);
            }
        }
    }

    /** Hands the {@code size} bytes of an answer to {@code sink}; on any failure the connection is dropped. */
    private void receive(SocketChannel ch, long size, long base, PeerReads.ChunkSink sink) throws IOException {
        Semaphore room = new Semaphore(CHUNKS_IN_FLIGHT);
        boolean ok = false;
        try {
            for (long got = 0; got < size; ) {
                room.acquireUninterruptibly();
                ByteBuffer b = BUFFERS.take();
                b.limit((int) Math.min(CHUNK, size - got));
                try {
                    BulkProtocol.readFully(ch, b);
                } catch (IOException e) {
                    BUFFERS.give(b);
                    throw e;
                }
                b.flip();
                try {
                    sink.accept(base + got, b, () -> {
                        BUFFERS.give(b);
                        room.release();
                    });
                } catch (RuntimeException e) {
                    BUFFERS.give(b); // (a sink that throws kept nothing)
                    throw e;
                }
                got += b.limit();
            }
            ok = true;
        } finally {
            if (!ok) {
                drop(ch);
            }
        }
    }

    private ArraydException failure(SocketChannel ch) throws IOException {
        ByteBuffer h = ByteBuffer.allocate(8);
        BulkProtocol.readFully(ch, h);
        int code = h.getInt(0);
        int n = h.getInt(4);
        if (n < 0 || n > BulkProtocol.MAX_MESSAGE_BYTES) {
            throw new IOException("a failure's message of " + Integer.toUnsignedString(n) + " bytes");
        }
        ByteBuffer m = ByteBuffer.allocate(n);
        BulkProtocol.readFully(ch, m);
        Status.Code c = Status.fromCodeValue(code).getCode();
        ErrorCode e = c == Status.Code.OK ? ErrorCode.INTERNAL : ErrorCode.valueOf(c.name());
        return new ArraydException(e, "peer " + peer + ": " + new String(m.array(), StandardCharsets.UTF_8));
    }

    private SocketChannel connect() throws IOException {
        SocketChannel ch = SocketChannel.open();
        synchronized (this) {
            if (closed) {
                ch.close();
                throw new IOException("the link closed");
            }
            open.add(ch);
        }
        try {
            ch.socket().connect(address, CONNECT_MILLIS);
            ch.socket().setTcpNoDelay(true);
            BulkProtocol.writeFully(ch, BulkProtocol.hello(key));
            ByteBuffer a = ByteBuffer.allocate(1);
            BulkProtocol.readFully(ch, a);
            if (a.get(0) != BulkProtocol.ACCEPTED) {
                throw new IOException("the bulk port did not accept this daemon's key");
            }
            return ch;
        } catch (IOException | RuntimeException e) {
            drop(ch);
            throw e;
        }
    }

    private void release(SocketChannel ch) {
        synchronized (this) {
            if (!closed) {
                idle.push(ch);
                return;
            }
        }
        drop(ch);
    }

    private void drop(SocketChannel ch) {
        synchronized (this) {
            open.remove(ch);
            idle.remove(ch);
        }
        try {
            ch.close();
        } catch (IOException e) {
            // gone either way
        }
    }

    private ArraydException unavailable(String reason) {
        return new ArraydException(ErrorCode.UNAVAILABLE, "peer " + peer + " (" + address + ") unreachable: " + reason);
    }

    /** Closes every connection: a read in progress fails with UNAVAILABLE. */
    @Override
    public void close() {
        java.util.List<SocketChannel> all;
        synchronized (this) {
            closed = true;
            all = java.util.List.copyOf(open);
            open.clear();
            idle.clear();
        }
        for (SocketChannel ch : all) {
            try {
                ch.close();
            } catch (IOException e) {
                // gone either way
            }
        }
    }

    /**
     * No connection to the bulk port could be made for a read (the port is at its limit, or gone): nothing of the
     * read happened, and it may go through gRPC instead.
     */
    static final class NoConnection extends ArraydException {
        NoConnection(String peer, IOException cause) {
            super(ErrorCode.UNAVAILABLE, "peer " + peer + ": no connection to its bulk port (" + cause + ")");
        }
    }

    /** Where a connection keeps its bulk link: tried once, null when there is none. */
    static final class Slot {
        boolean tried;
        BulkLink link;

        /** Closes the link, if one was opened. */
        synchronized void close() {
            tried = true;
            if (link != null) {
                link.close();
            }
        }
    }
}
