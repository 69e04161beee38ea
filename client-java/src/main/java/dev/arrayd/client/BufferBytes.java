package dev.arrayd.client;

import com.google.protobuf.UnsafeByteOperations;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.Download;
import dev.arrayd.proto.v1.GetDeviceRequest;
import dev.arrayd.proto.v1.Upload;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A session's writes and reads of buffer bytes ({@link Session#write}, {@link Session#read}): through a free slot
 * of the session's staging region (a daemon on this host, over its Unix socket) when there is one, else through
 * a ring in it ({@link StagingRing}) when the buffer's device takes ring transfers, else as Upload and Download
 * commands on the session stream, in chunks. Either way they are ordered with every other command of the
 * session on the buffer exactly as they were called.
 */
final class BufferBytes {

    /** Bytes of one Download command of a read: the size of the arrays the daemon keeps for downloads' data. */
    private static final int READ_CHUNK_BYTES = 8 << 20;
    private static final int MAX_READ_BYTES = Integer.MAX_VALUE - 8;

    private final SessionImpl session;
    /** The staging region over the daemon's Unix socket, or null (TCP, or regions turned off). */
    private volatile StagingArea staging;
    /** Per device: the stream of this session ring transfers run on, or empty where there are none. */
    private final Map<String, Optional<StreamHandle>> ringStreams = new HashMap<>();

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
     * Writes go through a free slot of the staging region when there is one (one Upload from it); a write
     * larger than any free slot streams through a ring in the region when the buffer's device takes ring
     * transfers (this call returns once the daemon has taken all but the ring's last slots); else they go over
     * the session stream as Upload commands of at most {@link Session#MAX_UPLOAD_BYTES}, each waiting on the one
     * before it. Either way they are ordered with every other command of the session on the buffer exactly as
     * they were called, and a failed chunk fails the rest.
     */
    Event write(BufferHandle buffer, long offsetBytes, ByteBuffer data) {
        Event e = writeStaged(buffer, offsetBytes, MemorySegment.ofBuffer(data));
        if (e != null) {
            return e;
        }
        // copy: the caller may reuse its buffer as soon as we return
        ByteBuffer copy = ByteBuffer.allocate(data.remaining());
        copy.put(data.duplicate()).flip();
        return writeOwned(buffer, offsetBytes, copy);
    }

    /**
     * Writes a Java array of numbers from the buffer's start, as {@link #write}: through the staging region or a
     * ring straight from the array when its bytes are the buffer's already (this machine is little-endian),
     * else as commands carrying {@code littleEndian}'s bytes.
     */
    Event writeArray(BufferHandle buffer, MemorySegment array, Supplier<ByteBuffer> littleEndian) {
        Event e = TypedArrays.LITTLE_ENDIAN_HERE ? writeStaged(buffer, 0, array) : null;
        return e != null ? e : writeOwned(buffer, 0, littleEndian.get());
    }

    /** A write through a free slot of the staging region or a ring in it; null when neither can take it now. */
    private Event writeStaged(BufferHandle buffer, long offsetBytes, MemorySegment data) {
        StagingArea st = staging;
        long total = data.byteSize();
        if (st == null || total == 0 || session.isClosing()) {
            return null;
        }
        BufferChecks.range(buffer, "offsetBytes", offsetBytes, "data", total); // before a slot is taken
        long at = st.allocate(total);
        if (at < 0) {
            return ringWrite(st, buffer, offsetBytes, data);
        }
        // through the shared-memory region: one copy into it, an upload the daemon reads from it
        MemorySegment.copy(data, 0, st.region.segment(), at, total);
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

    /** A write through a ring ({@link StagingRing}), or null where there can be none (the caller sends commands). */
    private Event ringWrite(StagingArea st, BufferHandle buffer, long offsetBytes, MemorySegment data) {
        long size = data.byteSize();
        RingTransfer t = submitRing(st, buffer, ring -> Command.newBuilder().setUpload(Upload.newBuilder()
                .setBuffer(buffer.id()).setOffsetBytes(offsetBytes).setFromRing(ring.message(size))));
        if (t == null) {
            return null;
        }
        // the ring is the daemon's until its command ends, whatever this side does
        t.event().future().whenComplete((r, err) -> st.release(t.ring().offset(), t.ring().byteSize()));
        t.ring().fill(data, t.event().future()); // (when it stops early, the event says why)
        return t.event();
    }

    /** A ring transfer's ring and the event of its command. */
    private record RingTransfer(StagingRing ring, Event event) {}

    /**
     * Takes a ring in the staging region and submits the transfer {@code command} builds for it on the ring
     * stream of {@code buffer}'s device; null where there can be no ring transfer now (nothing taken).
     */
    private RingTransfer submitRing(StagingArea st, BufferHandle buffer,
            Function<StagingRing, Command.Builder> command) {
        StreamHandle stream = ringStream(buffer);
        if (stream == null) {
            return null;
        }
        StagingRing ring = takeRing(st);
        if (ring == null) {
            return null;
        }
        try {
            return new RingTransfer(ring, session.submit(command.apply(ring), List.of(), stream.id()));
        } catch (RuntimeException ex) {
            st.release(ring.offset(), ring.byteSize());
            throw ex;
        }
    }

    /**
     * Whether this thread is one of the gRPC transport's event loops. The client's own channel runs every
     * callback there (its events' completions, so code the program chains to them), and the same thread sends
     * what the client submits: waiting there for the daemon to take part in a ring transfer would wait for a
     * command that thread never gets to send.
     */
    private static boolean onTransportThread() {
        return Thread.currentThread() instanceof io.grpc.netty.shaded.io.netty.util.concurrent.FastThreadLocalThread;
    }

    /** A ring in a free part of the staging region, its counts zeroed; null when no part is large enough now. */
    private static StagingRing takeRing(StagingArea st) {
        for (long slotBytes : StagingRing.SLOT_BYTES) {
            long at = st.allocate(StagingRing.bytesFor(slotBytes));
            if (at >= 0) {
                return StagingRing.at(st.region, at, slotBytes);
            }
        }
        return null;
    }

    /**
     * The stream of this session that ring transfers with {@code buffer} run on (one per device, created on the
     * first), or null where they cannot: a padded buffer, a device without ring transfers, or a thread of the
     * gRPC transport (see {@link #onTransportThread}).
     */
    private StreamHandle ringStream(BufferHandle buffer) {
        if (buffer.padding() != null || onTransportThread()) {
            return null;
        }
        synchronized (ringStreams) {
            Optional<StreamHandle> stream = ringStreams.get(buffer.device());
            if (stream == null) {
                try {
                    CompletableFuture<DeviceInfo> info = new CompletableFuture<>();
                    session.stubs().devices().getDevice(GetDeviceRequest.newBuilder().setDevice(buffer.device()).build(),
                            new FutureObserver<>(info, r -> Protos.device(r.getDevice())));
                    stream = info.get().ringTransfers()
                            ? Optional.of(session.createStream(buffer.device()).get()) : Optional.empty();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return null; // (not remembered: a later transfer asks again)
                } catch (ExecutionException e) {
                    stream = Optional.empty(); // (the commands' path then, for this session)
                }
                ringStreams.put(buffer.device(), stream);
            }
            return stream.orElse(null);
        }
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
        byte[] out = new byte[(int) sizeBytes];
        return readInto(buffer, offsetBytes, sizeBytes, MemorySegment.ofArray(out))
                .thenApply(v -> ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN));
    }

    /**
     * Reads {@code sizeBytes} from {@code offsetBytes} into {@code out} (memory of this read's own, such as a new
     * array): through a free slot of the staging region, or a ring in it, or as Download commands of at most
     * {@value #READ_CHUNK_BYTES} bytes on the session stream; in every case the read sees every command called
     * before it. Completes once every byte is in {@code out}.
     */
    CompletableFuture<Void> readInto(BufferHandle buffer, long offsetBytes, long sizeBytes, MemorySegment out) {
        session.checkOpen();
        BufferChecks.range(buffer, "offsetBytes", offsetBytes, "sizeBytes", sizeBytes);
        if (sizeBytes == 0) {
            return CompletableFuture.completedFuture(null);
        }
        StagingArea st = staging;
        if (st != null && !session.isClosing()) {
            long slot = st.allocate(sizeBytes);
            if (slot >= 0) {
                // through the shared-memory region: the daemon downloads into it, one copy out of it
                return slotRead(st, slot, buffer, offsetBytes, out);
            }
            CompletableFuture<Void> viaRing = ringRead(st, buffer, offsetBytes, out);
            if (viaRing != null) {
                return viaRing;
            }
        }
        List<CompletableFuture<EventResult>> parts = new ArrayList<>();
        for (long pos = 0; pos < sizeBytes; pos += READ_CHUNK_BYTES) {
            long len = Math.min(READ_CHUNK_BYTES, sizeBytes - pos);
            long at = pos;
            Command.Builder cmd = Command.newBuilder().setDownload(Download.newBuilder()
                    .setBuffer(buffer.id()).setOffsetBytes(offsetBytes + pos).setSizeBytes(len));
            parts.add(session.submit(cmd, List.of(), 0).future().thenApply(r -> {
                MemorySegment.copy(MemorySegment.ofBuffer(r.data()), 0, out, at, len);
                return r;
            }));
        }
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new));
    }

    private CompletableFuture<Void> slotRead(StagingArea st, long at, BufferHandle buffer, long offsetBytes,
            MemorySegment out) {
        long sizeBytes = out.byteSize();
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
                            throw err instanceof CompletionException c ? c : new CompletionException(err);
                        }
                        MemorySegment.copy(st.region.segment(), at, out, 0, sizeBytes);
                        return null;
                    } finally {
                        st.release(at, sizeBytes);
                    }
                });
    }

    /**
     * A read through a ring ({@link StagingRing}), emptied into {@code out} by a virtual thread of its own as the
     * daemon fills it; null where there can be none (the caller sends commands).
     */
    private CompletableFuture<Void> ringRead(StagingArea st, BufferHandle buffer, long offsetBytes, MemorySegment out) {
        long sizeBytes = out.byteSize();
        RingTransfer t = submitRing(st, buffer, ring -> Command.newBuilder().setDownload(Download.newBuilder()
                .setBuffer(buffer.id()).setOffsetBytes(offsetBytes).setSizeBytes(sizeBytes)
                .setIntoRing(ring.message(sizeBytes))));
        if (t == null) {
            return null;
        }
        StagingRing ring = t.ring();
        Event e = t.event();
        CompletableFuture<Void> result = new CompletableFuture<>();
        Thread.ofVirtual().name("arrayd-ring-read-" + e.id()).start(() -> {
            boolean all;
            try {
                all = ring.drain(out, e.future());
            } catch (RuntimeException closed) { // (the session closed meanwhile, unmapping the region)
                e.future().whenComplete((r, err) -> st.release(ring.offset(), ring.byteSize()));
                result.completeExceptionally(closed);
                return;
            }
            // the ring is given back once the daemon's command has ended and this side is done with it
            e.future().whenComplete((r, err) -> {
                st.release(ring.offset(), ring.byteSize());
                if (err != null) {
                    result.completeExceptionally(err);
                } else if (!all) {
                    result.completeExceptionally(new IllegalStateException("read of buffer " + buffer.id()
                            + ": interrupted while emptying the staging region's ring"));
                } else {
                    result.complete(null);
                }
            });
        });
        return result;
    }
}
