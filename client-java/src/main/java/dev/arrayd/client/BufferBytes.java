package dev.arrayd.client;

import com.google.protobuf.UnsafeByteOperations;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.Download;
import dev.arrayd.proto.v1.Upload;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A session's writes and reads of buffer bytes ({@link Session#write}, {@link Session#read}): through a free slot
 * of the session's staging region (a daemon on this host, over its Unix socket) when there is one, else as
 * Upload and Download commands on the session stream, in chunks. Either way they are ordered with every other
 * command of the session exactly as they were called.
 */
final class BufferBytes {

    /** Bytes of one Download command of a read: the size of the arrays the daemon keeps for downloads' data. */
    private static final int READ_CHUNK_BYTES = 8 << 20;
    private static final int MAX_READ_BYTES = Integer.MAX_VALUE - 8;

    private final SessionImpl session;
    /** The staging region over the daemon's Unix socket, or null (TCP, or regions turned off). */
    private volatile StagingArea staging;

    BufferBytes(SessionImpl session) {
        this.session = session;
    }

    /** Gives the session a staging region: writes and reads that fit a free slot go through it. */
    void useStaging(MappedRegion region) {
        staging = new StagingArea(region);
    }

    /** The session ended: the daemon freed the staging region with it; unmaps it here. */
    void dropStaging() {
        StagingArea st = staging;
        staging = null;
        if (st != null) {
            st.region.unmap();
        }
    }

    /**
     * Writes go through a free slot of the staging region when there is one (one Upload from it), else over
     * the session stream as Upload commands of at most {@link Session#MAX_UPLOAD_BYTES}, each waiting on the one
     * before it: either way they are ordered with every other command of the session exactly as they were
     * called, and a failed chunk fails the rest.
     */
    Event write(BufferHandle buffer, long offsetBytes, ByteBuffer data) {
        StagingArea st = staging;
        int total = data.remaining();
        long at;
        if (st != null && total > 0 && !session.isClosing()) {
            BufferChecks.range(buffer, "offsetBytes", offsetBytes, "data", total); // before a slot is taken
        }
        if (st != null && total > 0 && !session.isClosing() && (at = st.allocate(total)) >= 0) {
            // through the shared-memory region: one copy into it, an upload the daemon reads from it
            java.lang.foreign.MemorySegment.copy(java.lang.foreign.MemorySegment.ofBuffer(data), 0,
                    st.region.segment(), at, total);
            Event e;
            try {
                e = session.upload(buffer, offsetBytes, st.region, at, total, CommandOptions.defaults());
            } catch (RuntimeException ex) {
                st.release(at, total);
                throw ex;
            }
            e.future().whenComplete((r, err) -> st.release(at, total));
            return e;
        }
        // copy: the caller may reuse its buffer as soon as we return
        ByteBuffer copy = ByteBuffer.allocate(data.remaining());
        copy.put(data.duplicate()).flip();
        return writeOwned(buffer, offsetBytes, copy);
    }

    /** Like write, for a buffer nobody else touches afterwards: it is sent without copying. */
    Event writeOwned(BufferHandle buffer, long offsetBytes, ByteBuffer data) {
        session.checkOpen();
        BufferChecks.range(buffer, "offsetBytes", offsetBytes, "data", data.remaining());
        Event last = null;
        int total = data.remaining();
        int pos = 0;
        do {
            int len = Math.min(Session.MAX_UPLOAD_BYTES, total - pos);
            ByteBuffer chunk = data.duplicate();
            chunk.position(data.position() + pos).limit(data.position() + pos + len);
            Command.Builder cmd = Command.newBuilder().setUpload(Upload.newBuilder()
                    .setBuffer(buffer.id())
                    .setOffsetBytes(offsetBytes + pos)
                    .setData(UnsafeByteOperations.unsafeWrap(chunk)));
            last = session.submit(cmd, last == null ? List.of() : List.of(last.id()), 0);
            pos += len;
        } while (pos < total);
        return last;
    }

    CompletableFuture<ByteBuffer> read(BufferHandle buffer, long offsetBytes, long sizeBytes) {
        session.checkOpen();
        BufferChecks.range(buffer, "offsetBytes", offsetBytes, "sizeBytes", sizeBytes);
        if (sizeBytes > MAX_READ_BYTES) {
            throw new IllegalArgumentException("sizeBytes: " + sizeBytes + " (expected: <= " + MAX_READ_BYTES
                    + " to fit one array; read buffer " + buffer.id() + " in ranges)");
        }
        if (sizeBytes == 0) {
            return CompletableFuture.completedFuture(ByteBuffer.allocate(0).order(ByteOrder.LITTLE_ENDIAN));
        }
        StagingArea st = staging;
        long slot;
        if (st != null && !session.isClosing() && (slot = st.allocate(sizeBytes)) >= 0) {
            // through the shared-memory region: the daemon downloads into it, one copy out of it
            long at = slot;
            Event e;
            try {
                e = session.download(buffer, offsetBytes, sizeBytes, st.region, at, CommandOptions.defaults());
            } catch (RuntimeException ex) {
                st.release(at, sizeBytes);
                throw ex;
            }
            return e.future()
                    .handle((r, err) -> {
                        try {
                            if (err != null) {
                                throw err instanceof java.util.concurrent.CompletionException c ? c
                                        : new java.util.concurrent.CompletionException(err);
                            }
                            byte[] out = new byte[(int) sizeBytes];
                            java.lang.foreign.MemorySegment.copy(st.region.segment(), at,
                                    java.lang.foreign.MemorySegment.ofArray(out), 0, sizeBytes);
                            return ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN);
                        } finally {
                            st.release(at, sizeBytes);
                        }
                    });
        }
        // Reads go over the session stream as Download commands, so they see every command called
        // before them; the chunks are reassembled into one array.
        byte[] out = new byte[(int) sizeBytes];
        List<CompletableFuture<EventResult>> parts = new ArrayList<>();
        for (long pos = 0; pos < sizeBytes; pos += READ_CHUNK_BYTES) {
            long len = Math.min(READ_CHUNK_BYTES, sizeBytes - pos);
            int at = (int) pos;
            Command.Builder cmd = Command.newBuilder().setDownload(Download.newBuilder()
                    .setBuffer(buffer.id()).setOffsetBytes(offsetBytes + pos).setSizeBytes(len));
            parts.add(session.submit(cmd, List.of(), 0).future().thenApply(r -> {
                r.data().get(out, at, (int) len);
                return r;
            }));
        }
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
                .thenApply(v -> ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN));
    }

}
