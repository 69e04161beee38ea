package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.support.LaunchArguments;
import dev.arrayd.devices.api.support.LaunchGrid;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.MemRef;
import org.jocl.CL;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_command_queue;
import org.jocl.cl_event;
import org.jocl.cl_kernel;
import org.jocl.cl_mem;

import java.lang.foreign.MemorySegment;

/**
 * Turns {@link DeviceCommand}s into non-blocking enqueues on one command queue, recording their
 * events in the command's {@link InFlight}. Everything is checked before the first enqueue, so a
 * refused command enqueues nothing.
 *
 * <p>Host memory: a native segment is handed to the driver as it is (the caller keeps it alive
 * until the callback); a heap segment (e.g. a {@code byte[]}) may move during a garbage collection,
 * so it is staged through native memory owned by the command.
 */
final class CommandEnqueuer {

    /** Largest single transfer enqueue: a {@code ByteBuffer} view is limited to 2 GiB. */
    static final long TRANSFER_CHUNK = 1L << 30;

    private final OpenClDevice device;
    private final cl_command_queue queue;
    private final GuardBuffers guards;

    CommandEnqueuer(OpenClDevice device, cl_command_queue queue, GuardBuffers guards) {
        this.device = device;
        this.queue = queue;
        this.guards = guards;
    }

    void enqueue(InFlight f) {
        switch (f.command) {
            case DeviceCommand.Launch launch -> launch(f, launch);
            case DeviceCommand.Upload upload -> upload(f, upload);
            case DeviceCommand.Download download -> download(f, download);
            case DeviceCommand.Copy copy -> copy(f, copy);
            case DeviceCommand.Fill fill -> fill(f, fill);
            case DeviceCommand.PeerCopy peer -> throw new ArraydException(dev.arrayd.devices.api.ErrorCode.UNIMPLEMENTED, "peer copy to " + device.id() + " (not supported)");
            case DeviceCommand.Sequence seq -> throw new IllegalStateException("a sequence is submitted part by part");
            case DeviceCommand.RingTransfer ring -> throw DeviceCommand.RingTransfer.unsupportedOn(device.id());
            case null -> throw ArraydException.invalid("command: null (expected: a DeviceCommand)");
        }
    }

    private static void checkSameSize(long bytes, String what, long expected, String of) {
        if (bytes != expected) {
            throw ArraydException.invalid(what + ": " + bytes + " bytes (expected: " + expected + ", the size of " + of + ")");
        }
    }

    private void upload(InFlight f, DeviceCommand.Upload upload) {
        MemRef dst = upload.dst();
        ClSlab slab = device.slab(dst, "dst", -1);
        MemorySegment src = upload.src();
        checkSameSize(src.byteSize(), "src", dst.bytes(), "dst " + dst);
        if (dst.bytes() == 0) {
            return;
        }
        if (!src.isNative()) {
            MemorySegment staged = f.stage(dst.bytes());
            staged.copyFrom(src);
            src = staged;
        }
        for (long done = 0; done < dst.bytes(); done += TRANSFER_CHUNK) {
            long n = Math.min(TRANSFER_CHUNK, dst.bytes() - done);
            cl_event ev = new cl_event();
            CL.clEnqueueWriteBuffer(queue, slab.mem(), false, dst.offset() + done, n,
                    Pointer.to(src.asSlice(done, n).asByteBuffer()), 0, null, ev);
            f.track(ev);
        }
    }

    private void download(InFlight f, DeviceCommand.Download download) {
        MemRef src = download.src();
        ClSlab slab = device.slab(src, "src", -1);
        MemorySegment dst = download.dst();
        checkSameSize(dst.byteSize(), "dst", src.bytes(), "src " + src);
        if (src.bytes() == 0) {
            return;
        }
        MemorySegment target = dst;
        if (!dst.isNative()) {
            target = f.stage(src.bytes());
            f.copyBackFrom = target;
            f.copyBackTo = dst;
        }
        for (long done = 0; done < src.bytes(); done += TRANSFER_CHUNK) {
            long n = Math.min(TRANSFER_CHUNK, src.bytes() - done);
            cl_event ev = new cl_event();
            CL.clEnqueueReadBuffer(queue, slab.mem(), false, src.offset() + done, n,
                    Pointer.to(target.asSlice(done, n).asByteBuffer()), 0, null, ev);
            f.track(ev);
        }
    }

    private void copy(InFlight f, DeviceCommand.Copy copy) {
        ClSlab from = device.slab(copy.src(), "src", -1);
        ClSlab to = device.slab(copy.dst(), "dst", -1);
        long n = copy.src().bytes();
        checkSameSize(copy.dst().bytes(), "dst " + copy.dst(), n, "src " + copy.src());
        if (n == 0) {
            return;
        }
        long s = copy.src().offset();
        long d = copy.dst().offset();
        if (from == to && s < d + n && d < s + n) {
            // clEnqueueCopyBuffer refuses overlapping ranges of one buffer: go through a scratch buffer,
            // released at once (the enqueued copies keep it alive inside the driver)
            cl_mem scratch = CL.clCreateBuffer(device.context().context(), CL.CL_MEM_READ_WRITE, n, null, null);
            try {
                cl_event ev = new cl_event();
                CL.clEnqueueCopyBuffer(queue, from.mem(), scratch, s, 0, n, 0, null, ev);
                f.track(ev);
                ev = new cl_event();
                CL.clEnqueueCopyBuffer(queue, scratch, to.mem(), 0, d, n, 0, null, ev);
                f.track(ev);
            } finally {
                CL.clReleaseMemObject(scratch);
            }
            return;
        }
        cl_event ev = new cl_event();
        CL.clEnqueueCopyBuffer(queue, from.mem(), to.mem(), s, d, n, 0, null, ev);
        f.track(ev);
    }

    /**
     * {@code clEnqueueFillBuffer} needs an offset that is a multiple of the pattern size; the pattern
     * here starts at {@code dst}'s first byte, wherever that is. So the aligned middle is filled with
     * the pattern rotated to its alignment, and the unaligned ends (under one pattern each) are written
     * from host bytes.
     */
    private void fill(InFlight f, DeviceCommand.Fill fill) {
        int width = fill.patternBytes();
        if (width != 1 && width != 2 && width != 4 && width != 8) {
            throw ArraydException.invalid("patternBytes: " + width + " (expected: 1, 2, 4 or 8)");
        }
        MemRef dst = fill.dst();
        ClSlab slab = device.slab(dst, "dst", -1);
        if (dst.bytes() % width != 0) {
            throw ArraydException.invalid("dst: " + dst + " (expected: a multiple of the " + width + "-byte pattern)");
        }
        if (dst.bytes() == 0) {
            return;
        }
        byte[] pattern = new byte[width];
        for (int j = 0; j < width; j++) {
            pattern[j] = (byte) (fill.pattern() >>> (8 * j));
        }
        long start = dst.offset();
        long end = start + dst.bytes();
        long alignedStart = Math.min(end, (start + width - 1) / width * width);
        long alignedEnd = Math.max(alignedStart, end / width * width);
        if (alignedEnd > alignedStart) {
            byte[] rotated = new byte[width];
            for (int j = 0; j < width; j++) {
                rotated[j] = pattern[(int) ((alignedStart - start + j) % width)];
            }
            cl_event ev = new cl_event();
            CL.clEnqueueFillBuffer(queue, slab.mem(), Pointer.to(rotated), width, alignedStart, alignedEnd - alignedStart,
                    0, null, ev);
            f.track(ev);
        }
        writePatternBytes(f, slab, pattern, start, start, alignedStart);
        writePatternBytes(f, slab, pattern, start, alignedEnd, end);
    }

    private void writePatternBytes(InFlight f, ClSlab slab, byte[] pattern, long patternStart, long from, long to) {
        if (to <= from) {
            return;
        }
        MemorySegment bytes = f.stage(to - from);
        for (long x = from; x < to; x++) {
            bytes.set(java.lang.foreign.ValueLayout.JAVA_BYTE, x - from, pattern[(int) ((x - patternStart) % pattern.length)]);
        }
        cl_event ev = new cl_event();
        CL.clEnqueueWriteBuffer(queue, slab.mem(), false, from, to - from, Pointer.to(bytes.asByteBuffer()), 0, null, ev);
        f.track(ev);
    }

    private void launch(InFlight f, DeviceCommand.Launch launch) {
        Kernel kernel = launch.kernel();
        if (!(kernel instanceof OpenClKernel k)) {
            throw ArraydException.invalid("kernel: " + (kernel == null ? "null" : kernel.name() + " of backend "
                    + kernel.backend()) + " (expected: a kernel compiled by the opencl backend)");
        }
        long[] local = launch.localDims();
        long[] extents = null;
        if (k.ir() != null) {
            if (launch.globalDims() == null) {
                throw ArraydException.invalid("globalDims: null (expected: " + k.ir().kernel().gridDims() + " dims, as kernel "
                        + k.name() + " declares)");
            }
            LaunchArguments.checkCount(k.signature(), launch.args()); // the IR's checks below read the arguments
            extents = extents(k, launch);
            local = k.ir().checkLaunch(launch.globalDims(), local, launch.args(), extents);
        }
        LaunchGrid.check(launch.globalDims(), local, device.gridLimits(), Long.MAX_VALUE, LaunchGrid.Names.SPI);
        OpenClKernelModule module = k.module();
        if (!module.acquire()) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION,
                    "kernel: " + k.name() + " (expected: a kernel whose module is not closed)");
        }
        try {
            KernelPool pool = module.pool(device.context(), k.index());
            if (pool == null) {
                throw new ArraydException(ErrorCode.FAILED_PRECONDITION, "kernel: " + k.name()
                        + " (expected: a kernel compiled after " + device.id() + " was opened, by its backend)");
            }
            cl_kernel handle = pool.borrow();
            try {
                LaunchArgs.set(handle, k, launch.args(), device, extents);
                if (k.guardArg() >= 0) {
                    // the record belongs to the command from here on: its completion reads and returns it
                    MemorySegment words = f.stage(LaunchGuard.BYTES);
                    f.guard = new LaunchGuard(k.ir(), extents, guards.take(), words);
                    CL.clSetKernelArg(handle, k.guardArg(), Sizeof.cl_mem, Pointer.to(f.guard.mem()));
                }
                long[] global = launch.globalDims().clone();
                local = local == null ? null : local.clone();
                cl_event ev = new cl_event();
                CL.clEnqueueNDRangeKernel(queue, handle, global.length, null, global, local, 0, null, ev);
                f.track(ev);
            } finally {
                pool.giveBack(handle);
            }
            if (f.guard != null) {
                cl_event ev = new cl_event();
                CL.clEnqueueReadBuffer(queue, f.guard.mem(), false, 0, LaunchGuard.BYTES,
                        Pointer.to(f.guard.words().asByteBuffer()), 0, null, ev);
                f.track(ev);
            }
        } finally {
            module.release();
        }
    }

    /** Element counts of the buffer arguments by parameter position (0 where the argument is not a buffer). */
    private static long[] extents(OpenClKernel k, DeviceCommand.Launch launch) {
        var params = k.signature().params();
        long[] out = new long[params.size()];
        for (int i = 0; i < out.length; i++) {
            if (params.get(i).isBuffer() && launch.args().get(i) instanceof KernelArg.Buffer b && b.ref() != null) {
                out[i] = b.ref().bytes() / params.get(i).dtype().byteSize();
            }
        }
        return out;
    }
}
