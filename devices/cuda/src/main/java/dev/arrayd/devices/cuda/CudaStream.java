package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.support.Joins;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.StreamMarker;
import dev.arrayd.devices.api.ir.CheckedKernel;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUfunction;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * An in-order arrayd stream on one non-blocking CUDA stream ({@code CU_STREAM_NON_BLOCKING}: it never
 * synchronizes with the legacy default stream that other libraries in the process may use).
 *
 * <h2>One worker thread per stream</h2>
 * The worker is the only thread that enqueues onto the CUDA stream. It takes submitted commands, enqueues
 * each asynchronously between two {@code CUevent}s (start, end; their elapsed time is the command's device
 * time), keeps up to {@link #MAX_IN_FLIGHT} commands queued on the GPU, and completes them oldest first:
 * {@code cuEventSynchronize(end)}, then the callback, exactly once, in submission order. A command refused
 * before it reached CUDA (bad argument, unknown pool) fails through its callback in order too. Chosen over
 * {@code cuLaunchHostFunc} callbacks because those run on a driver thread that must not call CUDA, and a
 * callback of ours may (the scheduler releases dependents from it).
 *
 * <h2>Transfers</h2>
 * Uploads and downloads go through the device's pinned {@link StagingPool}: cut into chunks
 * ({@link ChunkPlan}), two staging buffers alternating, so the host memcpy of one chunk overlaps the DMA
 * of the previous. A download's last chunks are copied out to the caller's memory when the command
 * completes. Before the worker blocks for staging buffers it completes its own in-flight commands, so it
 * never holds buffers while waiting for more.
 *
 * <h2>Cross-stream ordering on the GPU</h2>
 * {@link #mark()} records a {@link CudaMarker} (a {@code CUevent}) at the stream's current end;
 * {@link #submitAfter} makes another stream (of any CUDA device) wait for it with
 * {@code cuStreamWaitEvent} before its command, with no host round trip (the {@link NativeStream}
 * marker interface; the scheduler uses it for dependencies already on a stream).
 *
 * <h2>Copies between devices</h2>
 * A {@link DeviceCommand.PeerCopy} runs on a stream of the destination device and pulls from another CUDA
 * device of the same backend: {@code cuMemcpyPeerAsync} on this stream when this device's context may
 * access the source's memory (peer access enabled at open), otherwise chunk by chunk through pinned
 * staging: the source device copies a chunk out on its own synchronous stream, this stream copies it in
 * ({@link CopyPath#forPeerCopy}). {@link #submitCopyTo} is the push direction (from this stream's device
 * to another), kept for GPU-side chaining.
 *
 * <h2>IR kernels</h2>
 * A launch of an IR kernel is first checked against what its proofs assumed ({@link IrLaunch}); its
 * entry point, the launch wrapper of {@link CudaIrAssembler}, takes the extents by value and a pointer to
 * two guard words of this stream ({@link GuardSlots}), which are zeroed before the kernel and copied back
 * after it on the stream. When the command completes, a guard that fired fails it with OUT_OF_RANGE
 * naming the kernel, the buffer and the index (the out-of-range access itself was skipped).
 *
 * <p>{@link #tryRunInline} declines: a GPU command's latency is the driver's, and two thread hand-offs
 * are small beside it. Commands submitted after {@link #close()} began fail at once with FAILED_PRECONDITION.
 */
final class CudaStream implements NativeStream {

    static final int CU_STREAM_NON_BLOCKING = 1;
    private static final int CU_EVENT_DEFAULT = 0;
    private static final int CU_EVENT_DISABLE_TIMING = 2;

    /** Commands queued on the GPU at once: deep enough to keep it busy, shallow enough to bound events held. */
    static final int MAX_IN_FLIGHT = 64;

    /** How long an idle worker spins before parking (as on the CPU backend: about one wake-up's cost). */
    static final long SPIN_NANOS = Runtime.getRuntime().availableProcessors() > 2 ? 30_000 : 2_000;

    /** Bound of a wait for staging buffers or a marker: beyond it the command fails instead of hanging. */
    static final long WAIT_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private static final Logger log = LoggerFactory.getLogger(CudaStream.class);

    /** A submitted unit of work: a command, or a copy to another device, with optional marker wait / record. */
    private record Item(DeviceCommand command, PeerCopy peer, CommandCallback callback, CudaMarker[] waitFor, CudaMarker mark) {}

    private record PeerCopy(MemRef src, CudaDevice dstDevice, MemRef dst) {}

    /** A command enqueued on the GPU (or refused), waiting to be completed in order. Worker only. */
    private static final class InFlight {
        final Item item;
        final long enqueuedNanos = System.nanoTime();
        CUevent start;
        CUevent end;
        ArraydException failure;
        StagingPool.Buffer[] staging;
        CudaKernelModule module;
        // an IR launch: its checked kernel, its extents and its guard slot (-1 for every other command)
        CheckedKernel irKernel;
        IrLaunch ir;
        int guardSlot = -1;
        // a download's tail: chunks [copyFrom, plan.count()) wait in staging until the end event
        MemorySegment copyTo;
        ChunkPlan plan;
        int copyFrom;

        InFlight(Item item) {
            this.item = item;
        }
    }

    private final CudaDevice device;
    private final String name;
    private final ConcurrentLinkedQueue<Item> queue = new ConcurrentLinkedQueue<>();
    private final AtomicLong pending = new AtomicLong();
    private final Thread worker;
    private volatile boolean parked;
    private volatile boolean closing;

    // worker only
    private CUstream stream;
    private ArraydException setupFailure;
    private final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();
    private final ArrayDeque<CUevent> spareEvents = new ArrayDeque<>();
    private final CUevent[] chunkEvents = new CUevent[2];
    private GuardSlots guards; // made on the first IR launch

    CudaStream(CudaDevice device, String name) {
        this.device = device;
        this.name = name;
        this.worker = new Thread(this::serve, "arrayd-cuda" + device.id().ordinal() + "-stream-" + name);
        worker.setDaemon(true);
        worker.start();
    }

    @Override
    public DeviceId device() {
        return device.id();
    }

    @Override
    public void submit(DeviceCommand command, CommandCallback callback) {
        offer(new Item(command, null, Objects.requireNonNull(callback, "callback"), null, null));
    }

    /** A {@code CUevent} recorded at the stream's current end (by the worker, in order). */
    @Override
    public StreamMarker mark() {
        if (closing) {
            return null; // its last commands may still run: a refused marker would be reached too early
        }
        CudaMarker marker = new CudaMarker();
        offer(new Item(null, null, CommandCallback.NONE, null, marker));
        // refused by a close that began meanwhile (retired at once, too early): the caller orders on the host
        return closing && marker.retired() ? null : marker;
    }

    /** Markers of any CUDA stream, of any device: {@code cuStreamWaitEvent} takes events of other contexts. */
    @Override
    public boolean canWaitFor(StreamMarker marker) {
        return marker instanceof CudaMarker;
    }

    /** Submits {@code command} to start on the GPU only once every marker in {@code after} is reached. */
    @Override
    public void submitAfter(StreamMarker[] after, DeviceCommand command, CommandCallback callback) {
        CudaMarker[] waits = new CudaMarker[after.length];
        for (int i = 0; i < after.length; i++) {
            if (!(after[i] instanceof CudaMarker m)) {
                throw new IllegalArgumentException("after[" + i + "]: " + after[i] + " (expected: a marker of a CUDA stream)");
            }
            waits[i] = m;
        }
        offer(new Item(command, null, Objects.requireNonNull(callback, "callback"), waits, null));
    }

    /** Copies {@code src} of this device to {@code dst} of {@code dstDevice} (which may be this device). */
    void submitCopyTo(MemRef src, CudaDevice dstDevice, MemRef dst, CommandCallback callback) {
        offer(new Item(null, new PeerCopy(src, Objects.requireNonNull(dstDevice, "dstDevice"), dst),
                Objects.requireNonNull(callback, "callback"), null, null));
    }

    private void offer(Item item) {
        pending.incrementAndGet();
        if (closing) {
            pending.decrementAndGet();
            LockSupport.unpark(worker); // it may be waiting for this very count to drop
            if (item.mark() != null) {
                item.mark().retire(); // never recorded: waiters must not wait for it
            }
            item.callback().failed(new ArraydException(ErrorCode.FAILED_PRECONDITION,
                    "stream " + name + " of " + device.id() + ": closed (expected: an open stream)"));
            return;
        }
        queue.add(item);
        if (parked) {
            LockSupport.unpark(worker);
        }
    }

    @Override
    public boolean isIdle() {
        return pending.get() == 0;
    }

    @Override
    public void close() {
        closing = true;
        LockSupport.unpark(worker);
        if (Thread.currentThread() != worker) {
            Joins.uninterruptibly(worker);
        }
        device.forget(this);
    }

    private boolean finished() {
        return closing && pending.get() == 0;
    }

    // ------------------------------------------------------------------ worker

    private void serve() {
        try {
            setUp();
            for (;;) {
                Item item;
                while (inFlight.size() < MAX_IN_FLIGHT && (item = queue.poll()) != null) {
                    inFlight.add(start(item));
                }
                InFlight oldest = inFlight.poll();
                if (oldest != null) {
                    complete(oldest);
                    continue;
                }
                if (finished()) {
                    return;
                }
                long spinUntil = System.nanoTime() + SPIN_NANOS;
                while (queue.isEmpty() && !finished() && System.nanoTime() < spinUntil) {
                    Thread.onSpinWait();
                }
                if (!queue.isEmpty() || finished()) {
                    continue;
                }
                parked = true;
                if (queue.isEmpty() && !finished()) {
                    LockSupport.park(this);
                }
                parked = false;
            }
        } finally {
            tearDown();
        }
    }

    private void setUp() {
        try {
            device.makeCurrent();
            CUstream s = new CUstream();
            CudaErrors.check(JCudaDriver.cuStreamCreate(s, CU_STREAM_NON_BLOCKING), "cuStreamCreate for " + this);
            stream = s;
            for (int i = 0; i < chunkEvents.length; i++) {
                CUevent e = new CUevent();
                CudaErrors.check(JCudaDriver.cuEventCreate(e, CU_EVENT_DISABLE_TIMING), "cuEventCreate for " + this);
                chunkEvents[i] = e;
            }
        } catch (ArraydException e) {
            setupFailure = e; // every command fails with it, through its callback
        } catch (Throwable t) {
            setupFailure = new ArraydException(ErrorCode.INTERNAL, "setting up " + this + " failed: " + t, t);
        }
    }

    private void tearDown() {
        try {
            while (!inFlight.isEmpty()) {
                complete(inFlight.poll());
            }
            if (stream != null) {
                JCudaDriver.cuStreamSynchronize(stream);
                JCudaDriver.cuStreamDestroy(stream);
            }
            for (CUevent e : chunkEvents) {
                if (e != null) {
                    JCudaDriver.cuEventDestroy(e);
                }
            }
            for (CUevent e : spareEvents) {
                JCudaDriver.cuEventDestroy(e);
            }
            spareEvents.clear();
            if (guards != null) {
                guards.close();
                guards = null;
            }
        } catch (Throwable t) {
            log.warn("releasing {} failed", this, t);
        }
    }

    private CUevent event() {
        CUevent e = spareEvents.poll();
        if (e == null) {
            e = new CUevent();
            CudaErrors.check(JCudaDriver.cuEventCreate(e, CU_EVENT_DEFAULT), "cuEventCreate on " + device.id());
        }
        return e;
    }

    private InFlight start(Item item) {
        InFlight f = new InFlight(item);
        try {
            if (setupFailure != null) {
                throw setupFailure;
            }
            if (item.waitFor() != null) {
                for (CudaMarker m : item.waitFor()) {
                    m.enqueueWait(stream, WAIT_LIMIT_NANOS, toString());
                }
            }
            if (item.command() == null && item.peer() == null) {
                // mark(): nothing to run; the marker is recorded here, at the stream's current end
                if (item.mark() != null) {
                    item.mark().arm(stream, toString());
                }
                return f;
            }
            f.start = event();
            CudaErrors.check(JCudaDriver.cuEventRecord(f.start, stream), "cuEventRecord on " + this);
            if (item.peer() != null) {
                copyTo(f, item.peer());
            } else {
                enqueue(f, item.command());
            }
            f.end = event();
            CudaErrors.check(JCudaDriver.cuEventRecord(f.end, stream), "cuEventRecord on " + this);
        } catch (ArraydException e) {
            f.failure = e;
        } catch (Throwable t) {
            f.failure = new ArraydException(ErrorCode.INTERNAL, describe(item) + " failed on " + device.id() + ": " + t, t);
        }
        if (f.failure != null && f.staging != null && stream != null) {
            // some chunks may already be on the GPU and still reading the staging buffers
            JCudaDriver.cuStreamSynchronize(stream);
        }
        if (item.mark() != null) {
            // armed even after a failure, so a waiter never hangs; failure itself travels on the host side
            item.mark().arm(stream, toString());
        }
        return f;
    }

    private void enqueue(InFlight f, DeviceCommand command) {
        switch (command) {
            case DeviceCommand.Launch launch -> launch(f, launch);
            case DeviceCommand.Upload upload -> upload(f, upload);
            case DeviceCommand.Download download -> download(f, download);
            case DeviceCommand.Copy copy -> {
                CudaSlab src = device.slab(copy.src(), "src", -1);
                CudaSlab dst = device.slab(copy.dst(), "dst", -1);
                sameSize(copy.dst().bytes(), "dst", copy.src().bytes(), "src " + copy.src());
                if (copy.src().bytes() > 0) {
                    CudaErrors.check(JCudaDriver.cuMemcpyDtoDAsync(dst.at(copy.dst().offset()), src.at(copy.src().offset()),
                            copy.src().bytes(), stream), "copy " + copy.src() + " -> " + copy.dst() + " on " + device.id());
                }
            }
            case DeviceCommand.Fill fill -> fill(f, fill);
            case DeviceCommand.PeerCopy peer -> peerCopy(f, peer);
            case null -> throw ArraydException.invalid("command: null (expected: a DeviceCommand)");
        }
    }

    private static void sameSize(long bytes, String what, long expected, String of) {
        if (bytes != expected) {
            throw ArraydException.invalid(what + ": " + bytes + " bytes (expected: " + expected + ", the size of " + of + ")");
        }
    }

    private void launch(InFlight f, DeviceCommand.Launch launch) {
        Kernel kernel = launch.kernel();
        if (!(kernel instanceof CudaKernel k)) {
            throw ArraydException.invalid("kernel: " + (kernel == null ? "null" : kernel.name() + " of backend " + kernel.backend())
                    + " (expected: a kernel compiled by the cuda backend)");
        }
        PackedArgs args = PackedArgs.pack(k.signature(), launch.args(), device::address);
        IrLaunch ir = k.ir() == null ? null : IrLaunch.prepare(k.ir(), launch.globalDims(), launch.localDims(), launch.args());
        LaunchGeometry g = LaunchGeometry.of(launch.globalDims(), ir == null ? launch.localDims() : ir.localDims(),
                device.options().defaultBlockSize(), device.facts().limits());
        CUfunction function = k.function(device);
        f.module = k.module().acquire(k.name());
        String what = "cuLaunchKernel of " + k.name() + " on " + device.id();
        if (ir == null) {
            CudaErrors.check(JCudaDriver.cuLaunchKernel(function, g.gridX(), g.gridY(), g.gridZ(), g.blockX(), g.blockY(),
                    g.blockZ(), 0, stream, kernelParams(args, null, 0), null), what);
            return;
        }
        if (guards == null) {
            guards = GuardSlots.allocate(toString());
        }
        int slot = guards.take();
        CudaErrors.check(JCudaDriver.cuMemsetD32Async(guards.device(slot), 0, GuardSlots.SLOT_BYTES / 4, stream),
                "zeroing the guard words of " + k.name() + " on " + device.id());
        CudaErrors.check(JCudaDriver.cuLaunchKernel(function, g.gridX(), g.gridY(), g.gridZ(), g.blockX(), g.blockY(),
                g.blockZ(), 0, stream, kernelParams(args, ir.extents(), guards.address(slot)), null), what);
        CudaErrors.check(JCudaDriver.cuMemcpyDtoHAsync(guards.host(slot), guards.device(slot), GuardSlots.SLOT_BYTES, stream),
                "reading the guard words of " + k.name() + " on " + device.id());
        f.irKernel = k.ir();
        f.ir = ir;
        f.guardSlot = slot;
    }

    /**
     * {@code cuLaunchKernel}'s {@code void**}: one pointer per parameter to a value of the parameter's width;
     * for an IR kernel ({@code extents} not null) then the extents struct and the guard words' address.
     */
    static Pointer kernelParams(PackedArgs args, long[] extents, long guardAddress) {
        int declared = args.values().length;
        Pointer[] each = new Pointer[declared + (extents == null ? 0 : 2)];
        if (extents != null) {
            each[declared] = Pointer.to(extents.clone());
            each[declared + 1] = Pointer.to(new long[] {guardAddress});
        }
        for (int i = 0; i < declared; i++) {
            long v = args.values()[i];
            each[i] = switch (args.widths()[i]) {
                case 1 -> Pointer.to(new byte[] {(byte) v});
                case 2 -> Pointer.to(new short[] {(short) v});
                case 4 -> Pointer.to(new int[] {(int) v});
                default -> Pointer.to(new long[] {v});
            };
        }
        return Pointer.to(each);
    }

    private StagingPool.Buffer[] staging(InFlight f, int count) {
        if (count == 0) {
            return new StagingPool.Buffer[0];
        }
        StagingPool pool = device.staging();
        StagingPool.Buffer[] buffers = pool.tryAcquire(count);
        if (buffers == null) {
            // hold nothing while waiting: our own in-flight commands give their buffers back as they complete
            while (!inFlight.isEmpty()) {
                complete(inFlight.poll());
            }
            try {
                buffers = pool.acquire(count, WAIT_LIMIT_NANOS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ArraydException(ErrorCode.CANCELLED, "interrupted while waiting for pinned staging on " + device.id(), e);
            }
            if (buffers == null) {
                throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, "pinned staging of " + device.id() + ": none free after "
                        + TimeUnit.NANOSECONDS.toSeconds(WAIT_LIMIT_NANOS) + " s (expected: other transfers to finish)");
            }
        }
        f.staging = buffers;
        return buffers;
    }

    private void upload(InFlight f, DeviceCommand.Upload upload) {
        CudaSlab dst = device.slab(upload.dst(), "dst", -1);
        MemorySegment src = Objects.requireNonNull(upload.src(), "src");
        sameSize(src.byteSize(), "src", upload.dst().bytes(), "dst " + upload.dst());
        ChunkPlan plan = new ChunkPlan(src.byteSize(), device.staging().chunkBytes());
        StagingPool.Buffer[] buffers = staging(f, plan.buffersNeeded());
        for (int i = 0; i < plan.count(); i++) {
            int b = i % buffers.length;
            if (i >= buffers.length) {
                // the DMA out of this buffer (chunk i - 2) must be done before the host overwrites it
                CudaErrors.check(JCudaDriver.cuEventSynchronize(chunkEvents[b]), "upload to " + upload.dst() + " on " + device.id());
            }
            long off = plan.offset(i);
            long len = plan.length(i);
            MemorySegment.copy(src, off, buffers[b].segment(), 0, len);
            CudaErrors.check(JCudaDriver.cuMemcpyHtoDAsync(dst.at(upload.dst().offset() + off), buffers[b].host(), len, stream),
                    "upload to " + upload.dst() + " on " + device.id());
            if (plan.count() > buffers.length) {
                CudaErrors.check(JCudaDriver.cuEventRecord(chunkEvents[b], stream), "cuEventRecord on " + this);
            }
        }
    }

    private void download(InFlight f, DeviceCommand.Download download) {
        CudaSlab src = device.slab(download.src(), "src", -1);
        MemorySegment dst = Objects.requireNonNull(download.dst(), "dst");
        sameSize(dst.byteSize(), "dst", download.src().bytes(), "src " + download.src());
        ChunkPlan plan = new ChunkPlan(dst.byteSize(), device.staging().chunkBytes());
        StagingPool.Buffer[] buffers = staging(f, plan.buffersNeeded());
        for (int i = 0; i < plan.count(); i++) {
            int b = i % buffers.length;
            if (i >= buffers.length) {
                // chunk i - 2 landed in this buffer: hand it to the caller before reusing the buffer
                CudaErrors.check(JCudaDriver.cuEventSynchronize(chunkEvents[b]), "download of " + download.src() + " on " + device.id());
                int done = i - buffers.length;
                MemorySegment.copy(buffers[b].segment(), 0, dst, plan.offset(done), plan.length(done));
            }
            CudaErrors.check(JCudaDriver.cuMemcpyDtoHAsync(buffers[b].host(), src.at(download.src().offset() + plan.offset(i)),
                    plan.length(i), stream), "download of " + download.src() + " on " + device.id());
            CudaErrors.check(JCudaDriver.cuEventRecord(chunkEvents[b], stream), "cuEventRecord on " + this);
        }
        f.copyTo = dst;
        f.plan = plan;
        f.copyFrom = Math.max(0, plan.count() - buffers.length);
    }

    private void fill(InFlight f, DeviceCommand.Fill fill) {
        int width = fill.patternBytes();
        if (width != 1 && width != 2 && width != 4 && width != 8) {
            throw ArraydException.invalid("patternBytes: " + width + " (expected: 1, 2, 4 or 8)");
        }
        CudaSlab slab = device.slab(fill.dst(), "dst", -1);
        long bytes = fill.dst().bytes();
        if (bytes % width != 0) {
            throw ArraydException.invalid("dst: " + fill.dst() + " (expected: a multiple of the " + width + "-byte pattern)");
        }
        if (bytes == 0) {
            return;
        }
        long address = slab.address() + fill.dst().offset();
        CUdeviceptr at = slab.at(fill.dst().offset());
        long p = fill.pattern();
        String what = "fill of " + fill.dst() + " on " + device.id();
        switch (FillPath.choose(width, address, p)) {
            case D8 -> CudaErrors.check(JCudaDriver.cuMemsetD8Async(at, (byte) p, bytes, stream), what);
            case D16 -> CudaErrors.check(JCudaDriver.cuMemsetD16Async(at, (short) p, bytes / 2, stream), what);
            case D32 -> CudaErrors.check(JCudaDriver.cuMemsetD32Async(at, (int) p, bytes / 4, stream), what);
            case D2D32_PAIR -> {
                // two strided 32-bit memsets, pitch 8: the low words, then the high words of every element
                CudaErrors.check(JCudaDriver.cuMemsetD2D32Async(at, 8, (int) p, 1, bytes / 8, stream), what);
                CudaErrors.check(JCudaDriver.cuMemsetD2D32Async(at.withByteOffset(4), 8, (int) (p >>> 32), 1, bytes / 8, stream), what);
            }
            case STAGED -> {
                MemorySegment pattern = MemorySegment.ofArray(new byte[(int) Math.min(bytes, device.staging().chunkBytes() / width * width)]);
                FillPath.repeat(pattern, p, width);
                stagedPattern(f, fill.dst(), slab, pattern);
            }
        }
    }

    /** Uploads {@code pattern} (a whole number of elements) repeatedly over {@code ref}. */
    private void stagedPattern(InFlight f, MemRef ref, CudaSlab slab, MemorySegment pattern) {
        StagingPool.Buffer[] buffers = staging(f, 1);
        MemorySegment.copy(pattern, 0, buffers[0].segment(), 0, pattern.byteSize());
        ChunkPlan plan = new ChunkPlan(ref.bytes(), pattern.byteSize());
        for (int i = 0; i < plan.count(); i++) {
            CudaErrors.check(JCudaDriver.cuMemcpyHtoDAsync(slab.at(ref.offset() + plan.offset(i)), buffers[0].host(),
                    plan.length(i), stream), "fill of " + ref + " on " + device.id());
        }
    }

    /**
     * {@link DeviceCommand.PeerCopy}: from {@code srcDevice} (another CUDA device of this backend) into this
     * device, on this stream. The source range is checked by the device that owns it, so a refusal names it.
     */
    private void peerCopy(InFlight f, DeviceCommand.PeerCopy peer) {
        if (!(peer.srcDevice() instanceof CudaDevice from) || !device.canCopyFrom(from)) {
            throw ArraydException.invalid("srcDevice: " + (peer.srcDevice() == null ? "null" : peer.srcDevice().id())
                    + " (expected: another cuda device opened by the same backend as " + device.id() + ")");
        }
        CudaSlab src = from.slab(peer.src(), "src", -1);
        CudaSlab dst = device.slab(peer.dst(), "dst", -1);
        sameSize(peer.dst().bytes(), "dst " + peer.dst(), peer.src().bytes(), "src " + peer.src() + " of " + from.id());
        long bytes = peer.src().bytes();
        if (bytes == 0) {
            return;
        }
        String what = "peer copy " + from.id() + " " + peer.src() + " -> " + device.id() + " " + peer.dst();
        CUdeviceptr source = src.at(peer.src().offset());
        CUdeviceptr target = dst.at(peer.dst().offset());
        switch (CopyPath.forPeerCopy(from.id().ordinal(), device.id().ordinal(), device.peers())) {
            case PEER -> CudaErrors.check(JCudaDriver.cuMemcpyPeerAsync(target, device.context(), source, from.context(),
                    bytes, stream), what);
            case STAGED -> stagedPull(f, from, source, target, bytes, what);
            case DEVICE_TO_DEVICE -> throw new IllegalStateException("a peer copy within " + device.id());
        }
    }

    /**
     * Chunk by chunk: the source device copies a chunk into one of two pinned buffers and waits for it
     * (on its own synchronous stream), this stream copies it in; a buffer is refilled only after this
     * stream's copy out of it (two chunks earlier) is done. Pinned memory is usable by every context
     * (unified addressing), so the source may fill this device's staging buffers.
     */
    private void stagedPull(InFlight f, CudaDevice from, CUdeviceptr source, CUdeviceptr target, long bytes, String what) {
        ChunkPlan plan = new ChunkPlan(bytes, device.staging().chunkBytes());
        StagingPool.Buffer[] buffers = staging(f, plan.buffersNeeded());
        try {
            for (int i = 0; i < plan.count(); i++) {
                int b = i % buffers.length;
                if (i >= buffers.length) {
                    CudaErrors.check(JCudaDriver.cuEventSynchronize(chunkEvents[b]), what);
                }
                from.downloadSync(source.withByteOffset(plan.offset(i)), buffers[b], plan.length(i));
                device.makeCurrent();
                CudaErrors.check(JCudaDriver.cuMemcpyHtoDAsync(target.withByteOffset(plan.offset(i)), buffers[b].host(),
                        plan.length(i), stream), what);
                if (plan.count() > buffers.length) {
                    CudaErrors.check(JCudaDriver.cuEventRecord(chunkEvents[b], stream), what);
                }
            }
        } finally {
            device.makeCurrent();
        }
    }

    private void copyTo(InFlight f, PeerCopy copy) {
        CudaSlab src = device.slab(copy.src(), "src", -1);
        CudaSlab dst = copy.dstDevice().slab(copy.dst(), "dst", -1);
        sameSize(copy.dst().bytes(), "dst", copy.src().bytes(), "src " + copy.src());
        long bytes = copy.src().bytes();
        if (bytes == 0) {
            return;
        }
        String what = "copy " + device.id() + " " + copy.src() + " -> " + copy.dstDevice().id() + " " + copy.dst();
        CUdeviceptr from = src.at(copy.src().offset());
        CUdeviceptr to = dst.at(copy.dst().offset());
        switch (CopyPath.choose(device.id().ordinal(), copy.dstDevice().id().ordinal(), device.canAccessPeer(copy.dstDevice()))) {
            case DEVICE_TO_DEVICE -> CudaErrors.check(JCudaDriver.cuMemcpyDtoDAsync(to, from, bytes, stream), what);
            case PEER -> CudaErrors.check(JCudaDriver.cuMemcpyPeerAsync(to, copy.dstDevice().context(), from, device.context(),
                    bytes, stream), what);
            case STAGED -> {
                StagingPool.Buffer[] buffers = staging(f, 1);
                ChunkPlan plan = new ChunkPlan(bytes, device.staging().chunkBytes());
                try {
                    for (int i = 0; i < plan.count(); i++) {
                        CudaErrors.check(JCudaDriver.cuMemcpyDtoHAsync(buffers[0].host(), from.withByteOffset(plan.offset(i)),
                                plan.length(i), stream), what);
                        CudaErrors.check(JCudaDriver.cuEventRecord(chunkEvents[0], stream), what);
                        CudaErrors.check(JCudaDriver.cuEventSynchronize(chunkEvents[0]), what);
                        copy.dstDevice().uploadSync(buffers[0], to.withByteOffset(plan.offset(i)), plan.length(i));
                        device.makeCurrent();
                    }
                } finally {
                    device.makeCurrent();
                }
            }
        }
    }

    /** Waits for {@code f}, then reports. Runs for every command exactly once, in submission order. */
    private void complete(InFlight f) {
        long nanos = -1;
        if (f.end != null) {
            int result = JCudaDriver.cuEventSynchronize(f.end);
            if (result != CudaErrors.CUDA_SUCCESS && f.failure == null) {
                f.failure = CudaErrors.error(result, describe(f.item) + " on " + device.id());
            }
            if (f.failure == null) {
                float[] ms = new float[1];
                if (JCudaDriver.cuEventElapsedTime(ms, f.start, f.end) == CudaErrors.CUDA_SUCCESS) {
                    nanos = (long) (ms[0] * 1e6);
                }
                if (f.copyTo != null) {
                    for (int i = f.copyFrom; i < f.plan.count(); i++) {
                        MemorySegment.copy(f.staging[i % f.staging.length].segment(), 0, f.copyTo, f.plan.offset(i), f.plan.length(i));
                    }
                }
                if (f.guardSlot >= 0) {
                    f.failure = f.ir.failure(f.irKernel, guards.word(f.guardSlot, 0), guards.word(f.guardSlot, 1));
                }
            }
        }
        if (nanos < 0) {
            nanos = System.nanoTime() - f.enqueuedNanos;
        }
        if (f.start != null) {
            spareEvents.add(f.start);
        }
        if (f.end != null) {
            spareEvents.add(f.end);
        }
        if (f.staging != null) {
            device.staging().release(f.staging);
        }
        if (f.module != null && f.module.release()) {
            JCudaDriver.cuCtxSetCurrent(device.context());
        }
        if (f.item.mark() != null) {
            f.item.mark().retire(); // done on the host's view: later waits are skipped, the event freed
        }
        // counted done before the callback runs, so a callback (or its waiter) sees the stream idle
        pending.decrementAndGet();
        CommandCallback callback = f.item.callback();
        try {
            if (f.failure == null) {
                callback.completed(nanos);
            } else {
                callback.failed(f.failure);
            }
        } catch (Throwable t) {
            log.warn("callback of {} on {} threw (callbacks must not throw)", describe(f.item), this, t);
        }
    }

    private static String describe(Item item) {
        if (item.peer() != null) {
            return "copy to " + item.peer().dstDevice().id();
        }
        return item.command() == null ? "null command" : item.command().getClass().getSimpleName().toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return "stream " + name + " of " + device.id();
    }
}
