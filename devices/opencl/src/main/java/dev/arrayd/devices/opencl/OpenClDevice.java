package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.support.AbstractDevice;
import dev.arrayd.devices.api.support.SlabLedger;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.MemRef;
import org.jocl.CL;
import org.jocl.CLException;
import org.jocl.Pointer;
import org.jocl.cl_command_queue;
import org.jocl.cl_device_id;
import org.jocl.cl_mem;

import java.util.List;

/**
 * One OpenCL device. Each slab is one {@code cl_mem} of the device's platform context; a
 * {@link MemRef} is a byte range inside it, bounds-checked here before any OpenCL call sees it.
 * The sum of slab sizes never exceeds {@link DeviceInfo#memoryBytes()}, and no slab exceeds
 * {@code CL_DEVICE_MAX_MEM_ALLOC_SIZE}.
 */
final class OpenClDevice extends AbstractDevice<OpenClStream, ClSlab> {

    private final long maxAllocBytes;
    private final boolean exactDivideSqrt;
    private final List<String> irMissing;
    private final ClContext context;
    private final cl_device_id clDevice;
    private final BinaryCache binaries;
    private final Object slabLock = new Object(); // for syncQueue
    private cl_command_queue syncQueue; // guarded by slabLock; for memsetZero, made on first use

    OpenClDevice(ClDeviceFacts facts, ClContext context, cl_device_id clDevice, int binaryCacheEntries) {
        super(facts.info());
        this.maxAllocBytes = facts.maxAllocBytes();
        this.exactDivideSqrt = facts.exactDivideSqrt();
        this.irMissing = facts.irMissing();
        this.context = context;
        this.clDevice = clDevice;
        this.binaries = new BinaryCache(binaryCacheEntries);
    }

    ClContext context() {
        return context;
    }

    cl_device_id clDevice() {
        return clDevice;
    }

    /** See {@link ClDeviceFacts#exactDivideSqrt()}. */
    boolean exactDivideSqrt() {
        return exactDivideSqrt;
    }

    /** What the device lacks for IR kernels; empty when it runs them. */
    List<String> irMissing() {
        return irMissing;
    }

    BinaryCache binaries() {
        return binaries;
    }

    /** One {@code cl_mem} of the context. */
    @Override
    protected ClSlab allocateSlab(int poolId, long bytes, long alignment, long remaining) {
        if (bytes > maxAllocBytes) {
            throw exhausted(poolId, bytes, "at most " + maxAllocBytes + " bytes in one slab (CL_DEVICE_MAX_MEM_ALLOC_SIZE)", null);
        }
        try {
            // the driver aligns a buffer to CL_DEVICE_MEM_BASE_ADDR_ALIGN, which is info().baseAlignment()
            return new ClSlab(poolId, CL.clCreateBuffer(context.context(), CL.CL_MEM_READ_WRITE, bytes, null, null), bytes);
        } catch (CLException e) {
            throw exhausted(poolId, bytes, "a buffer the driver can allocate", e);
        }
    }

    private ArraydException exhausted(int poolId, long bytes, String expected, CLException cause) {
        String message = id() + ": pool " + poolId + " of " + bytes + " bytes (expected: " + expected + ")"
                + (cause == null ? "" : "; clCreateBuffer failed: " + ClInfo.errorName(cause.getStatus()));
        return new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, message, cause);
    }

    @Override
    protected void freeSlab(ClSlab slab) {
        // commands already enqueued on it keep the memory alive inside the driver until they finish
        CL.clReleaseMemObject(slab.mem());
    }

    @Override
    public void memsetZero(MemRef ref) {
        ClSlab slab = slab(ref, "ref", -1);
        if (ref.bytes() == 0) {
            return;
        }
        synchronized (slabLock) {
            checkOpen();
            if (syncQueue == null) {
                syncQueue = OpenClStream.createQueue(this);
            }
            try {
                CL.clEnqueueFillBuffer(syncQueue, slab.mem(), Pointer.to(new byte[] {0}), 1, ref.offset(), ref.bytes(),
                        0, null, null);
                CL.clFinish(syncQueue);
            } catch (CLException e) {
                throw ClErrors.toArrayd(e, "memsetZero of " + ref + " on " + id());
            }
        }
    }

    @Override
    protected OpenClStream makeStream(String name) {
        return new OpenClStream(this, name);
    }

    /** After the streams: the synchronous queue, then every slab. */
    @Override
    protected void release(SlabLedger<ClSlab> slabs) {
        synchronized (slabLock) {
            if (syncQueue != null) {
                CL.clReleaseCommandQueue(syncQueue);
                syncQueue = null;
            }
        }
        for (ClSlab slab : slabs.removeAll()) {
            CL.clReleaseMemObject(slab.mem());
        }
    }
}
