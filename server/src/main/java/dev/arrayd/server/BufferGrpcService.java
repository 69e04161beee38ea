package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.proto.v1.BufferInfo;
import dev.arrayd.proto.v1.BufferServiceGrpc;
import dev.arrayd.proto.v1.CreateBufferRequest;
import dev.arrayd.proto.v1.CreateBufferResponse;
import dev.arrayd.proto.v1.CreateViewRequest;
import dev.arrayd.proto.v1.CreateViewResponse;
import dev.arrayd.proto.v1.DescribeBufferRequest;
import dev.arrayd.proto.v1.DescribeBufferResponse;
import dev.arrayd.proto.v1.DestroyBufferRequest;
import dev.arrayd.proto.v1.DestroyBufferResponse;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.ReadBufferResponse;
import dev.arrayd.proto.v1.WriteBufferRequest;
import dev.arrayd.proto.v1.WriteBufferResponse;
import dev.arrayd.scheduler.Buffer;
import dev.arrayd.scheduler.CommandSpec;
import dev.arrayd.scheduler.Event;
import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.scheduler.Session;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Buffers, and the bulk data paths. Writes and reads go through the scheduler as Upload and
 * Download commands, so they are ordered with everything else that touches the buffer.
 */
final class BufferGrpcService extends BufferServiceGrpc.BufferServiceImplBase {

    /** Default and largest chunk of ReadBuffer. */
    static final int DEFAULT_CHUNK = 1 << 20;
    /** One download command covers at most this much (a Java array's limit, with margin). */
    static final long MAX_WINDOW = 1L << 30;
    private final Scheduler scheduler;
    private final SessionRegistry sessions;
    private final int maxChunk;
    /** Reads up to {@link DownloadArrays#WINDOW_BYTES} (a peer's fetch reads pieces of it) download into these. */
    private final DownloadArrays arrays;
    /** What a read holds in the heap until its call ends. */
    private final TransferMemory memory;
    /** Where a buffer may start inside a region: the devices' base alignment (launches use it in place). */
    static final long HOST_REGION_ALIGNMENT = 64;

    BufferGrpcService(Scheduler scheduler, SessionRegistry sessions, int maxMessageBytes, DownloadArrays arrays,
            TransferMemory memory) {
        this.scheduler = scheduler;
        this.arrays = arrays;
        this.memory = memory;
        this.sessions = sessions;
        this.maxChunk = Math.max(4096, maxMessageBytes - 4096);
    }

    @Override
    public void createBuffer(CreateBufferRequest req, StreamObserver<CreateBufferResponse> out) {
        Calls.unary(out, () -> {
            SessionLease l = sessions.lease(req.getSession());
            var mode = ProtoCodec.memoryMode(req.getMemoryMode(), req.getSharing());
            var sharing = ProtoCodec.sharing(req.getSharing());
            var dtype = ProtoCodec.dtype(req.getDtype(), "dtype");
            long[] dims = ProtoCodec.longs(req.getDimsList());
            // reserve the tenant's quota first; the scheduler's own checks (dims, budget) may still refuse. A
            // PER_STREAM buffer holds no memory itself: each stream's instance is charged when it is made.
            dev.arrayd.scheduler.Padding padding = padding(req, dims, dtype);
            if (padding != null && (sharing == dev.arrayd.scheduler.Sharing.PER_STREAM || req.hasHostRegion())) {
                throw ArraydException.invalid("padding: " + req.getPaddingCount() + " axes with " + (req.hasHostRegion()
                        ? "host_region (expected: no padding; a buffer living in a region is the region's bytes)"
                        : "sharing PER_STREAM (expected: no padding; a per-stream buffer's instances are plain arrays)"));
            }
            long bytes = sharing == dev.arrayd.scheduler.Sharing.PER_STREAM ? 0
                    : dataBytes(padding == null ? dims : paddedDims(dims, padding), dtype.byteSize());
            l.usage.reserveMemory(bytes);
            Buffer b;
            dev.arrayd.scheduler.HostMemory host = null;
            try {
                if (req.hasHostRegion()) {
                    if (sharing == dev.arrayd.scheduler.Sharing.PER_STREAM) {
                        throw ArraydException.invalid("sharing: PER_STREAM with host_region (expected: SHARED; a buffer "
                                + "living in a region is one array)");
                    }
                    host = hostMemory(l, req.getHostRegion(), dataBytes(dims, dtype.byteSize()));
                    b = scheduler.createBuffer(l.session, dtype, dims, req.getDevice(), req.getLabel(), mode, host);
                } else if (padding != null) {
                    b = scheduler.createBuffer(l.session, dtype, dims, padding, req.getDevice(), req.getLabel(), mode);
                } else {
                    b = scheduler.createBuffer(l.session, dtype, dims, req.getDevice(), req.getLabel(), mode, sharing);
                }
            } catch (RuntimeException e) {
                l.usage.memoryBytes.addAndGet(-bytes);
                if (host != null) {
                    host.release().run();
                }
                throw e;
            }
            l.ownedBuffers.put(b.handle(), bytes);
            if (l.closed && l.ownedBuffers.remove(b.handle()) != null) {
                l.usage.memoryBytes.addAndGet(-bytes); // the session closed meanwhile and freed it
            }
            return CreateBufferResponse.newBuilder().setBuffer(ProtoCodec.bufferInfo(b, scheduler.replicaStates(b))).build();
        });
    }

    /**
     * The region bytes a buffer created with host_region lives in; the region is held (not freed, even after
     * DestroyRegion) until the scheduler releases the memory.
     */
    private dev.arrayd.scheduler.HostMemory hostMemory(SessionLease l, dev.arrayd.proto.v1.RegionSlice slice,
            long bytes) {
        var broker = sessions.regions();
        if (broker == null) {
            throw new ArraydException(dev.arrayd.devices.api.ErrorCode.FAILED_PRECONDITION, "host_region: this daemon has no shared-memory "
                    + "regions (they need its Unix domain socket: serve --uds PATH)");
        }
        if (slice.getSizeBytes() != 0 && slice.getSizeBytes() != bytes) {
            throw ArraydException.invalid("host_region.size_bytes: " + Long.toUnsignedString(slice.getSizeBytes())
                    + " (expected: 0 or " + bytes + ", the buffer's size)");
        }
        if (slice.getOffsetBytes() % HOST_REGION_ALIGNMENT != 0) {
            throw ArraydException.invalid("host_region.offset_bytes: " + Long.toUnsignedString(slice.getOffsetBytes())
                    + " (expected: a multiple of " + HOST_REGION_ALIGNMENT + ")");
        }
        var region = l.regions.get(slice.getRegion(), "host_region.region");
        var memory = l.regions.slice(slice.getRegion(), slice.getOffsetBytes(), bytes, "host_region");
        region.buffers().incrementAndGet();
        var once = new java.util.concurrent.atomic.AtomicBoolean();
        return new dev.arrayd.scheduler.HostMemory(memory, () -> {
            if (once.compareAndSet(false, true)) {
                region.buffers().decrementAndGet();
                broker.retireReady();
            }
        });
    }

    /** The request's padding, or null when it has none (zeros on every axis make a plain buffer). */
    private static dev.arrayd.scheduler.Padding padding(CreateBufferRequest req, long[] dims,
            dev.arrayd.devices.api.DType dtype) {
        int rank = dims.length;
        if (req.getPaddingCount() == 0) {
            if (req.hasPaddingValue()) {
                throw ArraydException.invalid("padding_value: set without padding (expected: padding, one entry per axis)");
            }
            return null;
        }
        if (req.getPaddingCount() != rank) {
            throw ArraydException.invalid("padding: " + req.getPaddingCount() + " entries (expected: " + rank
                    + ", one per axis of dims)");
        }
        long[] left = new long[rank];
        long[] right = new long[rank];
        for (int i = 0; i < rank; i++) {
            left[i] = Wire.size(req.getPadding(i).getLeft(), "padding[" + i + "].left");
            right[i] = Wire.size(req.getPadding(i).getRight(), "padding[" + i + "].right");
        }
        // an absurd padding is a bad argument, not a quota matter: the scheduler's check, before any memory is reserved
        boolean dimsValid = true;
        for (long d : dims) {
            dimsValid &= d > 0; // else the scheduler names the bad dim
        }
        if (dimsValid) {
            dev.arrayd.scheduler.Layout.padded(dims, left, right, (1L << 62) / dtype.byteSize());
        }
        var value = req.hasPaddingValue() ? ProtoCodec.scalar(req.getPaddingValue(), "padding_value") : null;
        return new dev.arrayd.scheduler.Padding(left, right, value);
    }

    /** The padded extents (saturating: an absurd padding is refused by the quota or the scheduler). */
    private static long[] paddedDims(long[] dims, dev.arrayd.scheduler.Padding padding) {
        long[] out = new long[dims.length];
        long[] left = padding.left();
        long[] right = padding.right();
        for (int i = 0; i < dims.length; i++) {
            long e = dims[i] + left[i] + right[i];
            out[i] = e < 0 || left[i] > Long.MAX_VALUE / 4 || right[i] > Long.MAX_VALUE / 4 ? Long.MAX_VALUE / 4 : e;
        }
        return out;
    }

    @Override
    public void createView(CreateViewRequest req, StreamObserver<CreateViewResponse> out) {
        Calls.unary(out, () -> {
            SessionLease l = sessions.lease(req.getSession());
            Buffer v = scheduler.createView(l.session, req.getBase(), ProtoCodec.longs(req.getDimsList()),
                    req.getWholePadded(), req.getLabel());
            l.views.incrementAndGet();
            return CreateViewResponse.newBuilder().setBuffer(ProtoCodec.bufferInfo(v, scheduler.replicaStates(v))).build();
        });
    }

    @Override
    public void describeBuffer(DescribeBufferRequest req, StreamObserver<DescribeBufferResponse> out) {
        Calls.unary(out, () -> {
            Buffer b = scheduler.buffer(sessions.session(req.getSession()), req.getBuffer());
            return DescribeBufferResponse.newBuilder().setBuffer(ProtoCodec.bufferInfo(b, scheduler.replicaStates(b))).build();
        });
    }

    @Override
    public void destroyBuffer(DestroyBufferRequest req, StreamObserver<DestroyBufferResponse> out) {
        Calls.unary(out, () -> {
            SessionLease l = sessions.lease(req.getSession());
            Buffer storage = l.views.get() == 0 ? null : scheduler.buffer(l.session, req.getBuffer()).storage();
            scheduler.destroyBuffer(l.session, req.getBuffer());
            if (storage != null && heldThroughViews(l, storage)) {
                return DestroyBufferResponse.getDefaultInstance(); // its memory is charged until its last view goes
            }
            Long bytes = l.ownedBuffers.remove(storage != null ? storage.handle() : req.getBuffer());
            if (bytes != null) {
                l.usage.memoryBytes.addAndGet(-bytes);
            }
            return DestroyBufferResponse.getDefaultInstance();
        });
    }

    /**
     * Collects the chunks (protobuf already holds them; nothing is copied), then submits them as
     * one batch of uploads when the client half-closes. The last upload carries the client's event.
     * From its first chunk until its answer the call holds one place of the tenant's in-flight quota.
     */
    @Override
    public StreamObserver<WriteBufferRequest> writeBuffer(StreamObserver<WriteBufferResponse> out) {
        return new StreamObserver<>() {
            private final List<WriteBufferRequest> chunks = new ArrayList<>();
            private boolean failed;
            private long held;
            private long limit = -1;
            private InFlightCall quota;
            /** What the chunks hold of the daemon's transfer-memory (given back once, when the call ends). */
            private final java.util.concurrent.atomic.AtomicLong inMemory = new java.util.concurrent.atomic.AtomicLong();

            @Override
            public void onNext(WriteBufferRequest c) {
                if (failed) {
                    return;
                }
                if (!chunks.isEmpty() && !c.getSession().isEmpty() && !c.getSession().equals(chunks.getFirst().getSession())) {
                    fail(ArraydException.invalid("chunks[" + chunks.size() + "].session: differs from the first chunk's"));
                    return;
                }
                try {
                    if (limit < 0) {
                        SessionLease l = sessions.lease(c.getSession());
                        // chunks are held until the client half-closes: never more than the buffer holds
                        limit = addressableBytes(scheduler.buffer(l.session, c.getBuffer()), c.getWholePadded());
                        quota = InFlightCall.reserve(l, "WriteBuffer");
                    }
                    memory.hold(c.getData().size(), "WriteBuffer");
                    inMemory.addAndGet(c.getData().size());
                } catch (RuntimeException e) {
                    fail(e);
                    return;
                }
                held += c.getData().size();
                if (held > limit) {
                    fail(new ArraydException(dev.arrayd.devices.api.ErrorCode.OUT_OF_RANGE, "chunks: " + held
                            + " bytes so far (expected: at most the buffer's " + limit + " bytes)"));
                    return;
                }
                chunks.add(c);
            }

            @Override
            public void onError(Throwable t) {
                // the client cancelled before half-closing: nothing was submitted
                chunks.clear();
                release();
            }

            @Override
            public void onCompleted() {
                if (failed) {
                    return;
                }
                try {
                    if (chunks.isEmpty()) {
                        throw ArraydException.invalid("chunks: none (expected: at least one naming session and buffer)");
                    }
                    WriteBufferRequest first = chunks.getFirst();
                    Session s = sessions.session(first.getSession());
                    long buffer = first.getBuffer();
                    List<CommandSpec> specs = new ArrayList<>(chunks.size());
                    long bytes = 0;
                    for (int i = 0; i < chunks.size(); i++) {
                        WriteBufferRequest c = chunks.get(i);
                        if (c.getBuffer() != 0 && c.getBuffer() != buffer) {
                            throw ArraydException.invalid("chunks[" + i + "].buffer: differs from the first chunk's");
                        }
                        long[] waits = i == 0 ? Wire.events(first.getWaitEventsList(), "wait_events") : null;
                        long event = i == chunks.size() - 1 ? Wire.newEvent(first.getEvent(), "event") : 0;
                        specs.add(new CommandSpec(event, waits, 0, new CommandSpec.UploadOp(buffer,
                                Wire.size(c.getOffsetBytes(), "chunks[" + i + "].offset_bytes"), ProtoCodec.segment(c.getData()),
                                first.getWholePadded())));
                        bytes += c.getData().size();
                    }
                    long total = bytes;
                    List<Event> events = scheduler.submit(s, specs, null);
                    Event last = events.getLast();
                    last.onDone(e -> {
                        release(); // before the answer: whoever hears it finds the quota given back
                        if (e.isFailed()) {
                            Calls.fail(out, e.failure());
                        } else {
                            Calls.complete(out, WriteBufferResponse.newBuilder().setEvent(e.id()).setBytesWritten(total).build());
                        }
                    });
                } catch (RuntimeException e) {
                    release();
                    Calls.fail(out, e);
                } finally {
                    chunks.clear();
                }
            }

            private void fail(Throwable t) {
                failed = true;
                chunks.clear();
                release();
                Calls.fail(out, t);
            }

            private void release() {
                if (quota != null) {
                    quota.release();
                }
                memory.release(inMemory.getAndSet(0));
            }
        };
    }

    /**
     * Submits downloads of the whole range at once (so the client gets one consistent snapshot,
     * ordered after every earlier write), then streams the windows out in chunks once they are done
     * ({@link ReadBufferSender}).
     * The call holds one place of the tenant's in-flight quota until its downloads are done; its
     * deadline bounds them as in Submit, and a cancelled call cancels them.
     */
    @Override
    public void readBuffer(ReadBufferRequest req, StreamObserver<ReadBufferResponse> responses) {
        ServerCallStreamObserver<ReadBufferResponse> out = (ServerCallStreamObserver<ReadBufferResponse>) responses;
        AtomicReference<Runnable> onCancel = new AtomicReference<>(() -> { });
        ReadBufferSender sender = new ReadBufferSender(out);
        out.setOnCancelHandler(() -> {
            onCancel.get().run();
            sender.cancelled();
        });
        List<Event> windows = null;
        long offset;
        int chunk;
        InFlightCall quota;
        byte[] into = null;
        int intoBytes = 0;
        long held = 0;
        try {
            SessionLease l = sessions.lease(req.getSession());
            Session s = l.session;
            Buffer b = scheduler.buffer(s, req.getBuffer());
            offset = Wire.size(req.getOffsetBytes(), "offset_bytes");
            long asked0 = Wire.size(req.getSizeBytes(), "size_bytes");
            long whole = addressableBytes(b, req.getWholePadded());
            long size = asked0 == 0 ? whole - Math.min(offset, whole) : asked0;
            if (offset > whole - size) {
                throw new ArraydException(dev.arrayd.devices.api.ErrorCode.OUT_OF_RANGE, "read: bytes [" + offset + ", +"
                        + size + ") (expected: within the " + whole + (b.isPadded() && !req.getWholePadded() ? " interior" : "")
                        + " bytes of " + b + ")");
            }
            long asked = Wire.u32(req.getChunkBytes());
            // what the client accepts bounds the chunk too (with room for the chunk's fields and framing)
            long fits = Math.min(maxChunk, l.receiveBytes - 1024);
            chunk = (int) Math.min(asked == 0 ? DEFAULT_CHUNK : asked, fits);
            List<CommandSpec> specs = new ArrayList<>();
            long[] waits = Wire.events(req.getWaitEventsList(), "wait_events");
            long deadline = Calls.deadlineNanos();
            memory.hold(size, "ReadBuffer"); // until the call ends (its windows are downloaded at once)
            held = size;
            if (size > 0 && size <= DownloadArrays.WINDOW_BYTES) {
                // one window, into an array of the pool
                intoBytes = (int) size;
                into = arrays.window();
                specs.add(new CommandSpec(0, waits, 0, new CommandSpec.DownloadOp(b.handle(), offset, size, MAX_WINDOW,
                        MemorySegment.ofArray(into), req.getWholePadded()), deadline, null));
            }
            for (long o = 0; o < size && into == null || specs.isEmpty(); o += MAX_WINDOW) {
                long len = Math.min(MAX_WINDOW, size - o);
                specs.add(new CommandSpec(0, specs.isEmpty() ? waits : null, 0,
                        new CommandSpec.DownloadOp(b.handle(), offset + o, len, MAX_WINDOW, null, req.getWholePadded()),
                        deadline, null));
                if (len == 0) {
                    break;
                }
            }
            quota = InFlightCall.reserve(l, "ReadBuffer");
            try {
                windows = scheduler.submit(s, specs, null);
            } catch (RuntimeException e) {
                quota.release();
                throw e;
            }
            long[] ids = windows.stream().mapToLong(Event::id).toArray();
            onCancel.set(() -> scheduler.cancel(s, ids)); // nobody reads them any more
            if (out.isCancelled()) {
                onCancel.get().run();
            }
        } catch (RuntimeException e) {
            if (into != null && windows == null) {
                arrays.sent(into); // (nothing was submitted into it)
            }
            memory.release(held);
            Calls.fail(out, e);
            return;
        }
        long release = held;
        if (into != null) {
            sender.sendWhenDone(windows.getFirst(), into, intoBytes, arrays, offset, chunk, quota::release,
                    () -> memory.release(release));
        } else {
            sender.sendWhenDone(windows, offset, chunk, quota::release, () -> memory.release(release));
        }
    }

    /** The data bytes of a buffer of these dims (saturating: the scheduler rejects absurd dims itself). */
    /** The bytes a write or read of {@code b} addresses: its interior when padded, unless {@code wholePadded}. */
    static long addressableBytes(Buffer b, boolean wholePadded) {
        return b.isPadded() && !wholePadded ? dataBytes(b.dims(), b.dtype().byteSize()) : b.sizeBytes();
    }

    /** Whether the session still holds a handle (a view, or the buffer) over {@code storage}'s memory. */
    private static boolean heldThroughViews(SessionLease l, Buffer storage) {
        for (Buffer b : l.session.buffers()) {
            if (b.storage() == storage) {
                return true;
            }
        }
        return false;
    }

    static long dataBytes(long[] dims, long elementBytes) {
        long n = elementBytes;
        for (long d : dims) {
            if (d <= 0) {
                return 0;
            }
            long hi = Math.multiplyHigh(n, d);
            n = n * d;
            if (hi != 0 || n < 0) {
                return Long.MAX_VALUE / 2;
            }
        }
        return n;
    }
}
