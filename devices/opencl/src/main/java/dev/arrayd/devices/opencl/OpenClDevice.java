package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.support.PoolTable;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import org.jocl.CL;
import org.jocl.CLException;
import org.jocl.Pointer;
import org.jocl.cl_command_queue;
import org.jocl.cl_device_id;
import org.jocl.cl_mem;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One OpenCL device. Each slab is one {@code cl_mem} of the device's platform context; a
 * {@link MemRef} is a byte range inside it, bounds-checked here before any OpenCL call sees it.
 * The sum of slab sizes never exceeds {@link DeviceInfo#memoryBytes()}, and no slab exceeds
 * {@code CL_DEVICE_MAX_MEM_ALLOC_SIZE}.
 */
final class OpenClDevice implements Device {

    private final DeviceInfo info;
    private final long maxAllocBytes;
    private final ClContext context;
    private final cl_device_id clDevice;
    private final BinaryCache binaries;
    private final Set<OpenClStream> streams = ConcurrentHashMap.newKeySet();
    private final Object slabLock = new Object();
    private volatile PoolTable<ClSlab> slabs = PoolTable.empty();
    private long usedBytes; // guarded by slabLock
    private cl_command_queue syncQueue; // guarded by slabLock; for memsetZero, made on first use
    private volatile boolean closed;

    OpenClDevice(ClDeviceFacts facts, ClContext context, cl_device_id clDevice, int binaryCacheEntries) {
        this.info = facts.info();
        this.maxAllocBytes = facts.maxAllocBytes();
        this.context = context;
        this.clDevice = clDevice;
        this.binaries = new BinaryCache(binaryCacheEntries);
    }

    @Override
    public DeviceId id() {
        return info.id();
    }

    @Override
    public DeviceInfo info() {
        return info;
    }

    ClContext context() {
        return context;
    }

    cl_device_id clDevice() {
        return clDevice;
    }

    BinaryCache binaries() {
        return binaries;
    }

    long usedBytes() {
        synchronized (slabLock) {
            return usedBytes;
        }
    }

    @Override
    public void allocPool(int poolId, long bytes, long alignment) {
        checkOpen();
        if (bytes <= 0) {
            throw ArraydException.invalid("bytes: " + bytes + " (expected: > 0)");
        }
        if (alignment <= 0 || Long.bitCount(alignment) != 1) {
            throw ArraydException.invalid("alignment: " + alignment + " (expected: a power of two)");
        }
        synchronized (slabLock) {
            if (slabs.find(poolId) != null) {
                throw new ArraydException(ErrorCode.ALREADY_EXISTS, "poolId: " + poolId + " (expected: a pool id not in use on "
                        + info.id() + ")");
            }
            long remaining = info.memoryBytes() - usedBytes;
            if (bytes > remaining) {
                throw exhausted(poolId, bytes, "at most the " + remaining + " bytes left of " + info.memoryBytes(), null);
            }
            if (bytes > maxAllocBytes) {
                throw exhausted(poolId, bytes, "at most " + maxAllocBytes + " bytes in one slab (CL_DEVICE_MAX_MEM_ALLOC_SIZE)", null);
            }
            cl_mem mem;
            try {
                // the driver aligns a buffer to CL_DEVICE_MEM_BASE_ADDR_ALIGN, which is info.baseAlignment()
                mem = CL.clCreateBuffer(context.context(), CL.CL_MEM_READ_WRITE, bytes, null, null);
            } catch (CLException e) {
                throw exhausted(poolId, bytes, "a buffer the driver can allocate", e);
            }
            slabs = slabs.with(new ClSlab(poolId, mem, bytes));
            usedBytes += bytes;
        }
    }

    private ArraydException exhausted(int poolId, long bytes, String expected, CLException cause) {
        String message = info.id() + ": pool " + poolId + " of " + bytes + " bytes (expected: " + expected + ")"
                + (cause == null ? "" : "; clCreateBuffer failed: " + ClInfo.errorName(cause.getStatus()));
        return new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, message, cause);
    }

    @Override
    public void freePool(int poolId) {
        ClSlab slab;
        synchronized (slabLock) {
            slab = slabs.find(poolId);
            if (slab == null) {
                return;
            }
            slabs = slabs.without(poolId);
            usedBytes -= slab.bytes();
        }
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
                throw ClErrors.toArrayd(e, "memsetZero of " + ref + " on " + info.id());
            }
        }
    }

    /** The slab holding {@code ref}, bounds-checked; names the value {@code what[index]} when refused. */
    ClSlab slab(MemRef ref, String what, int index) {
        if (ref == null) {
            throw ArraydException.invalid(name(what, index) + ": null (expected: a memory range of " + info.id() + ")");
        }
        ClSlab slab = slabs.find(ref.poolId());
        if (slab == null) {
            throw ArraydException.invalid(name(what, index) + ": " + ref + " (expected: a range of a slab of " + info.id()
                    + "; pool " + ref.poolId() + " is not allocated on it)");
        }
        if (ref.bytes() > slab.bytes() || ref.offset() > slab.bytes() - ref.bytes()) {
            throw new ArraydException(ErrorCode.OUT_OF_RANGE, name(what, index) + ": " + ref + " (expected: within pool "
                    + ref.poolId() + " of " + slab.bytes() + " bytes on " + info.id() + ")");
        }
        return slab;
    }

    private static String name(String what, int index) {
        return index < 0 ? what : what + "[" + index + "]";
    }

    @Override
    public NativeStream newStream(String name) {
        Objects.requireNonNull(name, "name");
        checkOpen();
        OpenClStream stream = new OpenClStream(this, name);
        streams.add(stream);
        return stream;
    }

    void forget(OpenClStream stream) {
        streams.remove(stream);
    }

    private void checkOpen() {
        if (closed) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, info.id() + ": closed (expected: an open device)");
        }
    }

    /** Drains and ends every stream, then releases every slab. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (OpenClStream stream : new ArrayList<>(streams)) {
            stream.close();
        }
        List<Integer> ids = new ArrayList<>();
        synchronized (slabLock) {
            for (int id : slabs.ids()) {
                ids.add(id);
            }
            if (syncQueue != null) {
                CL.clReleaseCommandQueue(syncQueue);
                syncQueue = null;
            }
        }
        ids.forEach(this::freePool);
    }

    @Override
    public String toString() {
        return info.id().toString();
    }
}
