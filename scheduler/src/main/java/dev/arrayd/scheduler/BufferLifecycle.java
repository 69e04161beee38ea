package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.Quote;
import dev.arrayd.devices.api.support.GuardedBy;
import dev.arrayd.devices.api.support.Saturating;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Buffers from creation to release: a new buffer's zeroed first replica, sharing by capability, the
 * per-stream instances of a {@link Sharing#PER_STREAM} buffer, the merge buffers of streams, and the
 * release of memory once nobody holds a buffer (reused after its last users: slab pool fences).
 * Replica state itself is written by {@link Coherence} only.
 */
final class BufferLifecycle {

    private final SchedulerContext ctx;

    BufferLifecycle(SchedulerContext ctx) {
        this.ctx = ctx;
    }

    /**
     * Creates a buffer with its first replica on {@code device} (empty = the first device); see
     * {@link Scheduler#createBuffer(Session, DType, long[], String, String, MemoryMode, Sharing)}.
     */
    Buffer create(Session s, DType dtype, long[] dims, String device, String label, MemoryMode mode, Sharing sharing) {
        return create(s, dtype, dims, null, device, label, mode, sharing);
    }

    /** A buffer with {@code padding} (null = none); see {@link #create(Session, DType, long[], String, String, MemoryMode, Sharing)}. */
    Buffer create(Session s, DType dtype, long[] dims, Padding padding, String device, String label, MemoryMode mode,
            Sharing sharing) {
        ctx.checkSession(s);
        MemoryMode m = mode == null ? MemoryMode.DEVICE : mode;
        if (sharing == Sharing.PER_STREAM && m != MemoryMode.DEVICE) {
            throw ArraydException.invalid("sharing: PER_STREAM with memory mode " + m + " (expected: DEVICE; a hosted or "
                    + "LOCAL buffer has one array)");
        }
        if (dtype == null) {
            throw ArraydException.invalid("dtype: unspecified (expected: one of " + Arrays.toString(DType.values()) + ")");
        }
        long elements = elementCount(dims, dtype);
        Layout layout = padding == null ? Layout.dense(dims) : layout(dims, padding, dtype);
        KernelArg.Scalar padValue = padding == null ? null : padValue(padding, dtype);
        if (layout.isPadded() && sharing == Sharing.PER_STREAM) {
            throw ArraydException.invalid("padding: " + layout + " with sharing PER_STREAM (expected: no padding; a "
                    + "per-stream buffer's instances are plain arrays)");
        }
        if (layout.isPadded()) {
            Pieces.count(layout, 0, layout.elements(), "padding"); // the first fill is one command: refused now, not after allocating
        }
        DeviceRuntime d = ctx.device(device);
        String l = label == null ? "" : label;
        FreeText.check(l, "label", FreeText.MAX_LABEL);
        Buffer b;
        if (layout.isPadded()) {
            if (!d.info().dtypes().contains(dtype)) {
                throw ArraydException.invalid("dtype: " + dtype.wireName() + " (not supported by device " + d.id() + ")");
            }
            b = newBuffer(s, dtype, layout, padValue, d, m, l, false);
        } else if (sharing == Sharing.PER_STREAM) {
            // a handle only: each stream gets its own zeroed instance when it first uses it
            b = new Buffer(Handles.next(), dtype, dims, elements, d, ctx.deviceCount(), m, l, false, true);
        } else {
            if (!d.info().dtypes().contains(dtype)) {
                throw ArraydException.invalid("dtype: " + dtype.wireName() + " (not supported by device " + d.id() + ")");
            }
            b = newBuffer(s, dtype, dims, elements, d, m, l, false);
        }
        s.buffers.put(b.handle(), b);
        return b;
    }

    /**
     * A buffer that lives in host memory the caller provides ({@link HostMemory}); see
     * {@link Scheduler#createBuffer(Session, DType, long[], String, String, MemoryMode, HostMemory)}.
     */
    Buffer createInHostMemory(Session s, DType dtype, long[] dims, String device, String label, MemoryMode mode,
            HostMemory memory) {
        ctx.checkSession(s);
        if (mode == null || !mode.hosted()) {
            throw ArraydException.invalid("memory_mode: " + (mode == null ? "unspecified" : mode.name()) + " (expected: "
                    + "HOSTED_CONSTANT, HOSTED_CHANGED_ON_DEVICES or HOSTED_VOLATILE for a buffer in host memory)");
        }
        if (dtype == null) {
            throw ArraydException.invalid("dtype: unspecified (expected: one of " + Arrays.toString(DType.values()) + ")");
        }
        long elements = elementCount(dims, dtype);
        if (memory.memory().byteSize() != elements * dtype.byteSize()) {
            throw ArraydException.invalid("host memory: " + memory.memory().byteSize() + " bytes (expected: "
                    + elements * dtype.byteSize() + ", the size of " + dtype.wireName() + Quote.longs(dims) + ")");
        }
        DeviceRuntime d = ctx.device(device);
        if (!d.info().dtypes().contains(dtype)) {
            throw ArraydException.invalid("dtype: " + dtype.wireName() + " (not supported by device " + d.id() + ")");
        }
        String l = label == null ? "" : label;
        FreeText.check(l, "label", FreeText.MAX_LABEL);
        Buffer b = new Buffer(Handles.next(), dtype, dims, elements, d, ctx.deviceCount(), mode, l, false, false, memory);
        ctx.lockSubmit();
        try {
            ctx.checkAccepting(null);
            Replica host = b.host;
            host.host = memory.memory();
            host.state = ReplicaState.MODIFIED; // its bytes are the buffer's first contents
            for (DeviceRuntime unified : ctx.devices()) {
                if (!unified.info().dtypes().contains(dtype)) {
                    continue;
                }
                dev.arrayd.devices.api.MemRef inPlace = unified.device().mapHost(memory.memory());
                if (inPlace != null) {
                    Replica twin = b.replica(unified);
                    twin.useHostMemoryOf(host, inPlace);
                    b.twin = twin;
                    break;
                }
            }
            ReplicaStates.normalize(b);
        } finally {
            ctx.unlockSubmit();
        }
        s.buffers.put(b.handle(), b);
        return b;
    }

    /** A buffer with a zero-filled replica on {@code d} (and a zero host copy for HOSTED_CHANGED_ON_DEVICES). */
    Buffer newBuffer(Session s, DType dtype, long[] dims, long elements, DeviceRuntime d, MemoryMode mode, String label,
            boolean internal) {
        return newBuffer(s, dtype, Layout.dense(dims), null, d, mode, label, internal);
    }

    /**
     * A buffer of {@code layout} whose first replica on {@code d} holds zeros in its interior and
     * {@code padValue} in its padding (and a host copy alike for HOSTED_CHANGED_ON_DEVICES).
     */
    Buffer newBuffer(Session s, DType dtype, Layout layout, KernelArg.Scalar padValue, DeviceRuntime d, MemoryMode mode,
            String label, boolean internal) {
        Buffer b = new Buffer(Handles.next(), dtype, layout, padValue, null, d, ctx.deviceCount(), mode, label, internal,
                false, null);
        Coherence co = Coherence.standalone(ctx.config(), s);
        try {
            ctx.lockSubmit();
            try {
                ctx.checkAccepting(null);
                co.initZeroed(b, d);
            } finally {
                ctx.unlockSubmit();
            }
        } finally {
            co.release(); // write-backs of evicted replicas too, when the allocation failed after all
        }
        return b;
    }

    /**
     * The MSI state of each replica of a buffer: device id (or {@code "host"}) to state, for the
     * replicas that exist (allocated, or current).
     */
    Map<String, ReplicaState> replicaStates(Buffer b) {
        Map<String, ReplicaState> out = new LinkedHashMap<>();
        ctx.lockSubmit();
        try {
            for (Replica r : b.replicas) {
                if (r != null && (r.allocated() || r.valid())) {
                    out.put(r.device.id().toString(), r.state);
                }
            }
            if (b.host.allocated() || b.host.valid()) {
                out.put("host", b.host.state);
            }
        } finally {
            ctx.unlockSubmit();
        }
        return out;
    }

    /** Gives {@code s} a handle to another session's buffer; see {@link Scheduler#importBuffer}. */
    long importBuffer(Session s, Buffer b, boolean readOnly) {
        ctx.checkSession(s);
        if (b.memoryMode() == MemoryMode.LOCAL) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, b + " is LOCAL (scratch for one graph; not shareable)");
        }
        b.storage().shared = true; // before s can name it (what launches name is the storage; see SessionLocal)
        if (b.holders.getAndUpdate(n -> n == 0 ? 0 : n + 1) == 0) {
            throw ArraydException.notFound(b + " (destroyed)");
        }
        if (readOnly) {
            s.readOnlyBuffers.add(b.handle());
        }
        if (s.buffers.putIfAbsent(b.handle(), b) != null) {
            b.holders.decrementAndGet(); // already held: one handle per session
            if (!readOnly) {
                s.readOnlyBuffers.remove(b.handle());
            }
        }
        if (s.closed && s.buffers.remove(b.handle(), b)) {
            b.holders.decrementAndGet();
        }
        return b.handle();
    }

    /**
     * A view of buffer {@code base}: a new handle over its memory with {@code dims}; see
     * {@link Scheduler#createView}.
     */
    Buffer createView(Session s, long base, long[] dims, boolean wholePadded, String label) {
        ctx.checkSession(s);
        Buffer of = s.buffer(base, "base");
        Buffer storage = of.storage();
        if (storage.memoryMode() == MemoryMode.LOCAL || storage.perStream) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, "base: " + of + " (expected: a buffer that is "
                    + "neither LOCAL nor PER_STREAM; " + (storage.perStream ? "its streams' instances are separate arrays"
                    : "it is scratch for one graph") + ")");
        }
        elementCount(dims, of.dtype());
        Layout layout = viewLayout(of.layout(), dims, wholePadded);
        String l = label == null ? "" : label;
        FreeText.check(l, "label", FreeText.MAX_LABEL);
        if (storage.holders.getAndUpdate(n -> n == 0 ? 0 : n + 1) == 0) {
            throw ArraydException.notFound("base: " + of + " (destroyed)");
        }
        Buffer v = new Buffer(Handles.next(), of.dtype(), layout, storage.padValue(), storage, storage.device(),
                ctx.deviceCount(), storage.memoryMode(), l, false, false, storage.hostMemory());
        if (s.isReadOnly(base)) {
            s.readOnlyBuffers.add(v.handle()); // a view of a read-only buffer is read-only
        }
        s.buffers.put(v.handle(), v);
        if (s.closed && s.buffers.remove(v.handle(), v)) {
            destroyHandle(s, v);
        }
        return v;
    }

    /**
     * The layout of a view with {@code dims} of a buffer laid out as {@code base}. With {@code wholePadded} (or
     * an unpadded base) a dense array of as many elements as the base's memory. Otherwise the view keeps the
     * base's padded axes: every axis from the outermost padded one inward, with its padding, stays as it is,
     * and the axes outside it may be regrouped (same element count), so that the interior is where it was.
     */
    static Layout viewLayout(Layout base, long[] dims, boolean wholePadded) {
        long want = !base.isPadded() || wholePadded ? base.storageElements() : base.elements();
        long n = 1;
        for (long d : dims) {
            n = Saturating.multiply(n, d);
        }
        if (n != want) {
            throw ArraydException.invalid("dims: " + Quote.longs(dims) + " (" + n + " elements; expected: " + want
                    + ", the " + (!base.isPadded() ? "elements of " : wholePadded ? "padded elements of " : "interior of ")
                    + base + ")");
        }
        if (!base.isPadded() || wholePadded) {
            return Layout.dense(dims);
        }
        long[] bd = base.dims();
        long[] bl = base.left();
        long[] br = base.right();
        int k = 0;
        while (bl[k] == 0 && br[k] == 0) {
            k++; // the outermost padded axis
        }
        int suffix = bd.length - k;
        int prefix = dims.length - suffix;
        boolean same = prefix >= 0; // with no outer axis left, the element count says the base's outer ones were all 1
        for (int i = 0; same && i < suffix; i++) {
            same = dims[prefix + i] == bd[k + i];
        }
        if (!same) {
            throw ArraydException.invalid("dims: " + Quote.longs(dims) + " (expected: the padded axes of " + base
                    + " unchanged as its innermost " + suffix + " dims, only the axes outside them regrouped; or a view "
                    + "of the whole padded array)");
        }
        long[] left = new long[dims.length];
        long[] right = new long[dims.length];
        System.arraycopy(bl, k, left, prefix, suffix);
        System.arraycopy(br, k, right, prefix, suffix);
        return new Layout(dims, left, right);
    }

    /** Forgets the handle now; frees the memory once no session holds the buffer (see {@link #release}). */
    void destroy(Session s, long handle) {
        Buffer b = s.buffers.remove(handle);
        if (b == null) {
            throw ArraydException.notFound("buffer " + Handles.format(handle) + " (not found in this session)");
        }
        s.readOnlyBuffers.remove(handle);
        destroyHandle(s, b);
    }

    /** One holder less; at none the buffer is released (a view lets go of the memory it views). */
    private void destroyHandle(Session s, Buffer b) {
        if (b.holders.decrementAndGet() > 0) {
            return; // another session still holds it
        }
        Buffer storage = b.storage();
        if (storage != b) {
            b.destroyed = true;
            if (storage.holders.decrementAndGet() > 0) {
                return; // the base, or another view, still holds the memory
            }
        }
        ctx.lockSubmit();
        try {
            release(storage);
        } finally {
            ctx.unlockSubmit();
        }
    }

    /** Frees every replica of a buffer nobody holds (memory reused after its last users). */
    @GuardedBy("SchedulerContext.submitLock")
    void release(Buffer b) {
        assert ctx.holdsSubmitLock();
        assert !b.isView() : "a view is released through its storage";
        b.destroyed = true;
        if (b.instances != null) {
            for (Map.Entry<Stream, Buffer> e : b.instances.entrySet()) {
                if (e.getKey().instances != null) {
                    e.getKey().instances.remove(e.getValue());
                }
                release(e.getValue());
            }
            b.instances = null;
        }
        if (b.charge != null) {
            b.charge.release(b.sizeBytes());
            b.charge = null;
        }
        ReplicaMemory.dropAll(b);
    }

    /** Frees the per-stream instances made for a stream (its buffers lose that instance). */
    @GuardedBy("SchedulerContext.submitLock")
    void dropInstances(Stream st) {
        assert ctx.holdsSubmitLock();
        if (st.instances == null) {
            return;
        }
        for (Buffer inst : st.instances) {
            if (inst.parent.instances != null) {
                inst.parent.instances.remove(st);
            }
            release(inst);
        }
        st.instances = null;
    }

    /** Frees a stream's own merge buffer (not a streaming alias of a client's buffer). */
    @GuardedBy("SchedulerContext.submitLock")
    void dropMerge(Stream st) {
        assert ctx.holdsSubmitLock();
        if (st.merge != null && !st.mergeInPlace) {
            release(st.merge);
        }
        st.merge = null;
        st.mergeInPlace = false;
    }

    /** A new merge buffer for {@code st} shaped like {@code src} (installed by the submission that fills it). */
    Buffer newMerge(Buffer src, Stream st) {
        return new Buffer(Handles.next(), src.dtype(), src.layout(), src.padValue(), null, st.device(), ctx.deviceCount(),
                MemoryMode.DEVICE, "merge buffer of " + st, true, false, null);
    }

    /**
     * The instance of per-stream buffer {@code b} for stream {@code st}, made (zeroed, its bytes charged to
     * the session's quota) on first use.
     */
    @GuardedBy("SchedulerContext.submitLock")
    Buffer instanceOf(Session s, Buffer b, Stream st, Coherence co) {
        assert ctx.holdsSubmitLock();
        if (b.instances != null) {
            Buffer inst = b.instances.get(st);
            if (inst != null) {
                return inst;
            }
        }
        if (b.destroyed) {
            throw ArraydException.notFound("buffer " + Handles.format(b.handle()) + " (destroyed)");
        }
        if (st.destroyed) {
            throw ArraydException.notFound(st + " (destroyed)");
        }
        DeviceRuntime d = st.device();
        if (!d.info().dtypes().contains(b.dtype())) {
            throw ArraydException.invalid(b + " (its dtype is not supported by " + d.id() + ", the device of " + st + ")");
        }
        MemoryCharge charge = s.memoryCharge();
        charge.reserve(b.sizeBytes());
        Buffer inst = new Buffer(Handles.next(), b.dtype(), b.dims(), b.elements(), d, ctx.deviceCount(), MemoryMode.DEVICE,
                (b.label().isEmpty() ? Handles.format(b.handle()) : b.label()) + " of " + st, true);
        inst.parent = b;
        inst.charge = charge;
        try {
            co.initZeroed(inst, d);
        } catch (RuntimeException e) {
            release(inst);
            throw e;
        }
        if (b.instances == null) {
            b.instances = new IdentityHashMap<>(4);
        }
        b.instances.put(st, inst);
        if (st.instances == null) {
            st.instances = new ArrayList<>(2);
        }
        st.instances.add(inst);
        return inst;
    }

    private Layout layout(long[] dims, Padding padding, DType dtype) {
        return Layout.padded(dims, padding.left(), padding.right(), (1L << 62) / dtype.byteSize());
    }

    private static KernelArg.Scalar padValue(Padding padding, DType dtype) {
        if (padding.value() == null) {
            return null;
        }
        try {
            CommandValidator.fillPattern(dtype, padding.value());
        } catch (ArraydException e) {
            throw ArraydException.invalid("padding.value: " + padding.value().dtype().wireName() + " scalar (expected: "
                    + (dtype == DType.F16 || dtype == DType.BF16 ? "f32" : dtype.wireName()) + " for a buffer of "
                    + dtype.wireName() + ")");
        }
        return padding.value();
    }

    private long elementCount(long[] dims, DType dtype) {
        int maxDims = ctx.config().maxDims();
        if (dims == null || dims.length == 0 || dims.length > maxDims) {
            throw ArraydException.invalid("dims: " + Quote.longs(dims) + " (expected: 1 to " + maxDims + " extents)");
        }
        long n = 1;
        for (int i = 0; i < dims.length; i++) {
            if (dims[i] <= 0) {
                throw ArraydException.invalid("dims[" + i + "]: " + dims[i] + " (expected: > 0)");
            }
            n = Saturating.multiply(n, dims[i]);
        }
        if (Saturating.multiply(n, dtype.byteSize()) > (1L << 62)) {
            throw ArraydException.invalid("dims: " + Quote.longs(dims) + " (expected: at most 2^62 bytes of "
                    + dtype.wireName() + " in all)");
        }
        return n;
    }
}
