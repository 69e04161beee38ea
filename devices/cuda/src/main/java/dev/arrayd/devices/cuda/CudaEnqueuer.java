package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.StreamMarker;
import dev.arrayd.devices.api.support.AfterMarkers;
import dev.arrayd.devices.api.support.StreamWorker;
import dev.arrayd.devices.api.support.ThreadConfined;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUfunction;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything a {@link CudaStream} does on the GPU, on its worker thread (like the OpenCL backend's
 * {@code CommandEnqueuer}): the non-blocking CUDA stream itself ({@code CU_STREAM_NON_BLOCKING}: it never
 * synchronizes with the legacy default stream other libraries in the process may use), each command
 * enqueued asynchronously between two {@code CUevent}s (start, end; their elapsed time is its device
 * time), and, when the command's turn comes, its completion ({@link #finish}).
 *
 * <h2>Transfers</h2>
 * Uploads and downloads go through the device's pinned {@link StagingPool}: cut into chunks
 * ({@link ChunkPlan}), two staging buffers alternating, so the host memcpy of one chunk overlaps the DMA
 * of the previous. A download's last chunks are copied out to the caller's memory when the command
 * completes. A transfer of many chunks is split over several threads ({@link ParallelTransfer}); one
 * from or to page-locked host memory is a single DMA, with no staging ({@link PageLocked}). Before
 * the worker blocks for staging buffers it completes its own in-flight commands ({@code drainOwn}), so it
 * never holds buffers while waiting for more.
 *
 * <h2>Copies between devices</h2>
 * A {@link DeviceCommand.PeerCopy} runs on a stream of the destination device and pulls from another CUDA
 * device of the same backend: {@code cuMemcpyPeerAsync} on this stream when this device's context may
 * access the source's memory (peer access enabled at open), otherwise chunk by chunk through pinned
 * staging: the source device copies a chunk out on its own synchronous stream, this stream copies it in
 * ({@link CopyPath#forPeerCopy}).
 *
 * <h2>IR kernels</h2>
 * A launch of an IR kernel is first checked against what its proofs assumed ({@link IrLaunch}); its
 * entry point, the launch wrapper of {@link CudaIrAssembler}, takes the extents by value and a pointer to
 * two guard words of this stream ({@link GuardSlots}), which are zeroed before the kernel and copied back
 * after it on the stream. When the command completes, a guard that fired fails it with OUT_OF_RANGE
 * naming the kernel, the buffer and the index (the out-of-range access itself was skipped).
 */
@ThreadConfined("the stream's worker")
final class CudaEnqueuer {

    static final int CU_STREAM_NON_BLOCKING = 1;
    private static final int CU_EVENT_DEFAULT = 0;
    private static final int CU_EVENT_DISABLE_TIMING = 2;

    /** Bound of a wait for staging buffers or a marker: beyond it the command fails instead of hanging. */
    static final long WAIT_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private static final Logger log = LoggerFactory.getLogger(CudaEnqueuer.class);

    private final CudaDevice device;
    /** The stream, for messages. */
    private final String owner;
    /** Completes the stream's own in-flight commands (before blocking for staging). */
    private final Runnable drainOwn;
    /** Whether each command runs between two timed events (its device time); else one untimed end event. */
    private final boolean timed;
    private final ArrayDeque<CUevent> spareEvents = new ArrayDeque<>();
    /** Events marking chunk DMAs: two per lane of a transfer, made as needed. */
    private CUevent[] chunkEvents = new CUevent[0];
    private CUstream stream;
    private ArraydException setupFailure;
    private GuardSlots guards; // made on the first IR launch

    /**
     * @param timed whether each command's device time is measured on the GPU (two timed events around it);
     *              when false, one untimed end event and the host time from enqueue to end
     */
    CudaEnqueuer(CudaDevice device, String owner, Runnable drainOwn, boolean timed) {
        this.device = device;
        this.owner = owner;
        this.drainOwn = drainOwn;
        this.timed = timed;
    }

    /** Creates the CUDA stream; a failure fails every command, through its callback. True when it worked. */
    boolean open() {
        try {
            device.makeCurrent();
            CUstream s = new CUstream();
            CudaErrors.check(JCudaDriver.cuStreamCreate(s, CU_STREAM_NON_BLOCKING), "cuStreamCreate for " + owner);
            stream = s;
            chunkEvents(2);
        } catch (ArraydException e) {
            setupFailure = e;
        } catch (Throwable t) {
            setupFailure = new ArraydException(ErrorCode.INTERNAL, "setting up " + owner + " failed: " + t, t);
        }
        return setupFailure == null;
    }

    /** At least {@code count} chunk events, made as needed. */
    private CUevent[] chunkEvents(int count) {
        if (chunkEvents.length < count) {
            int had = chunkEvents.length;
            chunkEvents = Arrays.copyOf(chunkEvents, count); // null until made; close skips those
            for (int i = had; i < count; i++) {
                CUevent e = new CUevent();
                CudaErrors.check(JCudaDriver.cuEventCreate(e, CU_EVENT_DISABLE_TIMING), "cuEventCreate for " + owner);
                chunkEvents[i] = e;
            }
        }
        return chunkEvents;
    }

    /** Releases the stream, its events and guard slots (after the last command completed). */
    void close() {
        try {
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
            log.warn("releasing {} failed", owner, t);
        }
    }

    private CUevent event() {
        CUevent e = spareEvents.poll();
        if (e == null) {
            e = new CUevent();
            CudaErrors.check(JCudaDriver.cuEventCreate(e, timed ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING),
                    "cuEventCreate on " + device.id());
        }
        return e;
    }

    /**
     * Enqueues one queue entry: first a wait on the GPU for each marker it waits for, then its command
     * between two events, or — for {@code mark()} — nothing but the marker's event at the stream's end.
     */
    CudaInFlight start(DeviceCommand command, CommandCallback callback, CudaMarker mark) {
        return start(command, callback, mark, null);
    }

    /** {@link #start}, with the staging buffers the command needs already taken ({@code staging}, or null). */
    CudaInFlight start(DeviceCommand command, CommandCallback callback, CudaMarker mark, StagingPool.Buffer[] staging) {
        CudaInFlight f = new CudaInFlight(command, callback, mark);
        f.staging = staging;
        try {
            if (setupFailure != null) {
                throw setupFailure;
            }
            if (callback instanceof AfterMarkers waits) {
                for (StreamMarker m : waits.after()) {
                    ((CudaMarker) m).enqueueWait(stream, WAIT_LIMIT_NANOS, owner);
                }
            }
            if (mark != null) {
                // mark(): nothing to run; the marker is recorded here, at the stream's current end
                mark.arm(stream, owner);
                return f;
            }
            if (timed) {
                f.start = event();
                CudaErrors.check(JCudaDriver.cuEventRecord(f.start, stream), "cuEventRecord on " + owner);
            }
            enqueue(f, command);
            f.end = event();
            CudaErrors.check(JCudaDriver.cuEventRecord(f.end, stream), "cuEventRecord on " + owner);
        } catch (ArraydException e) {
            f.failure = e;
        } catch (Throwable t) {
            f.failure = new ArraydException(ErrorCode.INTERNAL, StreamWorker.describe(command) + " failed on " + device.id()
                    + ": " + t, t);
        }
        if (f.failure != null && f.staging != null && stream != null) {
            // some chunks may already be on the GPU and still reading the staging buffers
            JCudaDriver.cuStreamSynchronize(stream);
        }
        if (mark != null) {
            // armed even after a failure, so a waiter never hangs; failure itself travels on the host side
            mark.arm(stream, owner);
        }
        return f;
    }

    /**
     * Waits for {@code f} and finishes it: its device time (returned), a download's last chunks copied out, an
     * IR launch's guard words read ({@code f.failure} set when one fired), its events, staging and module
     * given back, its marker retired. Runs for every command exactly once, in submission order.
     */
    long finish(CudaInFlight f) {
        long nanos = -1;
        if (f.end != null) {
            int result = JCudaDriver.cuEventSynchronize(f.end);
            if (result != CudaErrors.CUDA_SUCCESS && f.failure == null) {
                f.failure = CudaErrors.error(result, StreamWorker.describe(f.command) + " on " + device.id());
            }
            if (f.failure == null) {
                float[] ms = new float[1];
                if (f.start != null && JCudaDriver.cuEventElapsedTime(ms, f.start, f.end) == CudaErrors.CUDA_SUCCESS) {
                    nanos = (long) (ms[0] * 1e6);
                }
                if (f.copyTo != null) {
                    for (int i = f.copyFrom; i < f.plan.count(); i++) {
                        MemorySegment.copy(f.staging[i % f.staging.length].segment(), 0, f.copyTo, f.plan.offset(i),
                                f.plan.length(i));
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
        if (f.mark != null) {
            f.mark.retire(); // done on the host's view: later waits are skipped, the event freed
        }
        return nanos;
    }

    private void enqueue(CudaInFlight f, DeviceCommand command) {
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
            case DeviceCommand.RingTransfer ring -> throw DeviceCommand.RingTransfer.unsupportedOn(device.id());
            case DeviceCommand.Sequence seq -> throw new IllegalStateException("a sequence is submitted part by part");
            case null -> throw ArraydException.invalid("command: null (expected: a DeviceCommand)");
        }
    }

    private static void sameSize(long bytes, String what, long expected, String of) {
        if (bytes != expected) {
            throw ArraydException.invalid(what + ": " + bytes + " bytes (expected: " + expected + ", the size of " + of + ")");
        }
    }

    private void launch(CudaInFlight f, DeviceCommand.Launch launch) {
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
            guards = GuardSlots.allocate(owner);
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

    private StagingPool.Buffer[] staging(CudaInFlight f, int count) {
        if (f.staging != null && f.staging.length >= count) {
            return f.staging; // taken by the caller beforehand (an inline command)
        }
        if (count == 0) {
            return new StagingPool.Buffer[0];
        }
        if (f.staging != null) {
            throw new IllegalStateException(count + " staging buffers needed, " + f.staging.length + " taken beforehand");
        }
        StagingPool pool = device.staging();
        StagingPool.Buffer[] buffers = pool.tryAcquire(count);
        if (buffers == null) {
            // hold nothing while waiting: our own in-flight commands give their buffers back as they complete
            drainOwn.run();
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

    private void upload(CudaInFlight f, DeviceCommand.Upload upload) {
        CudaSlab dst = device.slab(upload.dst(), "dst", -1);
        MemorySegment src = Objects.requireNonNull(upload.src(), "src");
        sameSize(src.byteSize(), "src", upload.dst().bytes(), "dst " + upload.dst());
        Pointer locked = PageLocked.of(src);
        if (locked != null) {
            CudaErrors.check(JCudaDriver.cuMemcpyHtoDAsync(dst.at(upload.dst().offset()), locked, src.byteSize(), stream),
                    "upload to " + upload.dst() + " on " + device.id());
            return;
        }
        ChunkPlan plan = new ChunkPlan(src.byteSize(), device.staging().chunkBytes());
        if (parallel(f, plan, src, dst.at(upload.dst().offset()), true, "upload to " + upload.dst() + " on " + device.id())) {
            return;
        }
        StagingPool.Buffer[] buffers = staging(f, plan.buffersNeeded());
        CUevent[] chunkEvents = chunkEvents(2);
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
                CudaErrors.check(JCudaDriver.cuEventRecord(chunkEvents[b], stream), "cuEventRecord on " + owner);
            }
        }
    }

    private void download(CudaInFlight f, DeviceCommand.Download download) {
        CudaSlab src = device.slab(download.src(), "src", -1);
        MemorySegment dst = Objects.requireNonNull(download.dst(), "dst");
        sameSize(dst.byteSize(), "dst", download.src().bytes(), "src " + download.src());
        Pointer locked = PageLocked.of(dst);
        if (locked != null) {
            CudaErrors.check(JCudaDriver.cuMemcpyDtoHAsync(locked, src.at(download.src().offset()), dst.byteSize(), stream),
                    "download of " + download.src() + " on " + device.id());
            return;
        }
        ChunkPlan plan = new ChunkPlan(dst.byteSize(), device.staging().chunkBytes());
        if (parallel(f, plan, dst, src.at(download.src().offset()), false, "download of " + download.src() + " on " + device.id())) {
            return;
        }
        StagingPool.Buffer[] buffers = staging(f, plan.buffersNeeded());
        CUevent[] chunkEvents = chunkEvents(2);
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
            CudaErrors.check(JCudaDriver.cuEventRecord(chunkEvents[b], stream), "cuEventRecord on " + owner);
        }
        f.copyTo = dst;
        f.plan = plan;
        f.copyFrom = Math.max(0, plan.count() - buffers.length);
    }

    /**
     * Runs a transfer of many chunks on several lanes ({@link ParallelTransfer}) when the device has lanes
     * and the staging buffers for them are free now; false: the caller runs it serially.
     */
    private boolean parallel(CudaInFlight f, ChunkPlan serial, MemorySegment host, CUdeviceptr deviceBase, boolean upload,
            String what) {
        ChunkPlan plan = ParallelTransfer.plan(serial, upload);
        int lanes = ParallelTransfer.lanes(plan, device.options().copyLanes(), device.options().stagingBuffers());
        if (lanes < 2 || f.staging != null) {
            return false;
        }
        StagingPool.Buffer[] buffers = device.staging().tryAcquire(2 * lanes);
        if (buffers == null) {
            return false; // other transfers hold the pool: this one goes serially rather than wait
        }
        f.staging = buffers;
        ParallelTransfer.run(new ParallelTransfer.Job(device, stream, plan, buffers, chunkEvents(2 * lanes), host, deviceBase,
                upload, what), device.copyLanes());
        return true;
    }

    private void fill(CudaInFlight f, DeviceCommand.Fill fill) {
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
    private void stagedPattern(CudaInFlight f, MemRef ref, CudaSlab slab, MemorySegment pattern) {
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
    private void peerCopy(CudaInFlight f, DeviceCommand.PeerCopy peer) {
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
    private void stagedPull(CudaInFlight f, CudaDevice from, CUdeviceptr source, CUdeviceptr target, long bytes, String what) {
        ChunkPlan plan = new ChunkPlan(bytes, device.staging().chunkBytes());
        StagingPool.Buffer[] buffers = staging(f, plan.buffersNeeded());
        CUevent[] chunkEvents = chunkEvents(2);
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
}
