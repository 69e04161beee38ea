package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.support.AbstractDevice;
import dev.arrayd.devices.api.support.SlabLedger;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.MemRef;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

import java.util.List;
import java.util.Objects;

/**
 * One CUDA device, working in its primary context (the one the runtime API and other libraries in the
 * process share, retained at open and released at close). Each slab is one {@code cuMemAlloc}; a
 * {@link MemRef} is a byte range inside it, bounds-checked here before any CUDA call sees it. The sum of
 * slab sizes never exceeds {@link DeviceInfo#memoryBytes()}.
 *
 * <p>Every thread that calls the driver for this device first makes the primary context current
 * ({@link #makeCurrent()}: a thread-local store in the driver, cheap).
 *
 * <p>Another device opened by the same backend can always be copied from ({@link #canCopyFrom}): directly
 * when peer access is enabled, through pinned staging otherwise (see {@link CudaStream}).
 */
final class CudaDevice extends AbstractDevice<CudaStream, CudaSlab> {

    private static final int CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3;

    private final CudaDeviceFacts facts;
    private final CUdevice cuDevice;
    private final CUcontext context;
    private final CudaOptions options;
    private final Object owner; // the backend that opened this device; peers share it
    private final StagingPool staging;
    private final CopyLanes copyLanes;
    private final InlineLanes inline = new InlineLanes(this);
    private final Object slabLock = new Object();
    private CUstream syncStream; // guarded by slabLock; memsetZero and staged peer copies, made on first use
    private volatile PeerAccess peers = PeerAccess.NONE;

    CudaDevice(DeviceId id, CudaDeviceFacts facts, CUdevice cuDevice, CUcontext context, CudaOptions options, boolean nvrtc,
               Object owner) {
        super(facts.info(id, nvrtc));
        this.owner = Objects.requireNonNull(owner, "owner");
        this.facts = facts;
        this.cuDevice = cuDevice;
        this.context = context;
        this.options = options;
        this.staging = new StagingPool(options.stagingChunkBytes(), options.stagingBuffers());
        this.copyLanes = new CopyLanes(id.toString(), options.copyLanes());
    }

    CudaDeviceFacts facts() {
        return facts;
    }

    CUdevice cuDevice() {
        return cuDevice;
    }

    CUcontext context() {
        return context;
    }

    CudaOptions options() {
        return options;
    }

    StagingPool staging() {
        return staging;
    }

    /** The threads of the extra lanes of large transfers. */
    CopyLanes copyLanes() {
        return copyLanes;
    }

    /** Enqueuers for commands run on the caller's thread. */
    InlineLanes inline() {
        return inline;
    }

    void setPeers(PeerAccess peers) {
        this.peers = peers;
    }

    boolean canAccessPeer(CudaDevice other) {
        return peers.enabled(id().ordinal(), other.id().ordinal());
    }

    PeerAccess peers() {
        return peers;
    }

    /**
     * True for another device opened by the same backend (the scheduler then sends a
     * {@link dev.arrayd.devices.api.DeviceCommand.PeerCopy} instead of staging through its own host copy).
     */
    @Override
    public boolean canCopyFrom(Device src) {
        return src instanceof CudaDevice other && other != this && other.owner == owner;
    }

    void makeCurrent() {
        CudaErrors.check(JCudaDriver.cuCtxSetCurrent(context), "cuCtxSetCurrent for " + id());
    }

    /**
     * cuMemAlloc bases are 256-byte aligned at least; a larger alignment is honoured by the scheduler's
     * offsets, which are multiples of the base alignment it asked for. The native calls run under
     * slabLock, which also guards the context's synchronous work.
     */
    @Override
    protected CudaSlab allocateSlab(int poolId, long bytes, long alignment, long remaining) {
        synchronized (slabLock) {
            makeCurrent();
            CUdeviceptr ptr = new CUdeviceptr();
            int result = JCudaDriver.cuMemAlloc(ptr, bytes);
            if (result != CudaErrors.CUDA_SUCCESS) {
                throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, id() + ": pool " + poolId + " of " + bytes
                        + " bytes (expected: an allocation the driver can make); "
                        + CudaErrors.message("cuMemAlloc", result, CudaErrors.name(result)));
            }
            long[] address = new long[1];
            int attr = JCudaDriver.cuPointerGetAttribute(Pointer.to(address), CU_POINTER_ATTRIBUTE_DEVICE_POINTER, ptr);
            if (attr != CudaErrors.CUDA_SUCCESS) {
                JCudaDriver.cuMemFree(ptr);
                throw CudaErrors.error(attr, "cuPointerGetAttribute(DEVICE_POINTER) of pool " + poolId + " on " + id());
            }
            return new CudaSlab(poolId, ptr, address[0], bytes);
        }
    }

    @Override
    protected void freeSlab(CudaSlab slab) {
        synchronized (slabLock) {
            if (isClosed()) {
                return;
            }
            makeCurrent();
            // cuMemFree waits for work already queued on the allocation's context to stop using it
            JCudaDriver.cuMemFree(slab.ptr());
        }
    }

    @Override
    public void memsetZero(MemRef ref) {
        CudaSlab slab = slab(ref, "ref", -1);
        if (ref.bytes() == 0) {
            return;
        }
        synchronized (slabLock) {
            checkOpen();
            makeCurrent();
            CUstream s = syncStream();
            CudaErrors.check(JCudaDriver.cuMemsetD8Async(slab.at(ref.offset()), (byte) 0, ref.bytes(), s),
                    "memsetZero of " + ref + " on " + id());
            CudaErrors.check(JCudaDriver.cuStreamSynchronize(s), "memsetZero of " + ref + " on " + id());
        }
    }

    /** A private stream for synchronous work; caller holds slabLock and has the context current. */
    private CUstream syncStream() {
        if (syncStream == null) {
            CUstream s = new CUstream();
            CudaErrors.check(JCudaDriver.cuStreamCreate(s, CudaEnqueuer.CU_STREAM_NON_BLOCKING), "cuStreamCreate on " + id());
            syncStream = s;
        }
        return syncStream;
    }

    /**
     * Copies pinned host memory into this device and waits: the second half of a staged copy between
     * devices without peer access. Leaves this device's context current; the caller restores its own.
     */
    void uploadSync(StagingPool.Buffer from, CUdeviceptr to, long bytes) {
        synchronized (slabLock) {
            checkOpen();
            makeCurrent();
            CUstream s = syncStream();
            CudaErrors.check(JCudaDriver.cuMemcpyHtoDAsync(to, from.host(), bytes, s), "staged copy into " + id());
            CudaErrors.check(JCudaDriver.cuStreamSynchronize(s), "staged copy into " + id());
        }
    }

    /**
     * Copies device memory of this device into pinned host memory and waits: the first half of a staged
     * copy into another device without peer access. Leaves this device's context current; the caller
     * restores its own.
     */
    void downloadSync(CUdeviceptr from, StagingPool.Buffer to, long bytes) {
        synchronized (slabLock) {
            checkOpen();
            makeCurrent();
            CUstream s = syncStream();
            CudaErrors.check(JCudaDriver.cuMemcpyDtoHAsync(to.host(), from, bytes, s), "staged copy out of " + id());
            CudaErrors.check(JCudaDriver.cuStreamSynchronize(s), "staged copy out of " + id());
        }
    }

    /** The device address of a checked buffer argument. */
    long address(MemRef ref, int index) {
        return slab(ref, "args", index).address() + ref.offset();
    }


    @Override
    protected CudaStream makeStream(String name) {
        return new CudaStream(this, name);
    }

    /** After the streams: frees slabs and staging buffers. The primary context is the backend's. */
    @Override
    protected void release(SlabLedger<CudaSlab> slabs) {
        List<CudaSlab> toFree = slabs.removeAll();
        synchronized (slabLock) {
            JCudaDriver.cuCtxSetCurrent(context);
            inline.close();
            copyLanes.close();
            for (CudaSlab s : toFree) {
                JCudaDriver.cuMemFree(s.ptr());
            }
            if (syncStream != null) {
                JCudaDriver.cuStreamDestroy(syncStream);
                syncStream = null;
            }
            staging.close();
        }
    }

    @Override
    public String toString() {
        return id() + " (" + facts.describe() + ")";
    }
}
