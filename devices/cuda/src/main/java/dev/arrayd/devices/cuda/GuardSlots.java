package dev.arrayd.devices.cuda;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The guard words of one stream's IR launches: {@link #SLOTS} pairs of 64-bit words in device memory
 * (what a launch's guards write with {@code atomicCAS}) and a pinned host mirror each pair is copied
 * back into after its launch. A launch takes the next slot, zeroes it on the stream, launches, copies
 * it back on the stream; its completion reads the mirror once the end event has passed.
 *
 * <p>Round-robin with as many slots as a stream has commands in flight ({@link CudaStream#MAX_IN_FLIGHT}):
 * a slot comes round again only after {@code SLOTS} later launches were started, and a stream never has
 * more than that many commands in flight, so the launch that used it before has completed and been read.
 *
 * <p>Worker thread only; made on a stream's first IR launch (its context current), freed at its end.
 */
final class GuardSlots implements AutoCloseable {

    static final int SLOTS = CudaStream.MAX_IN_FLIGHT;
    static final int SLOT_BYTES = 2 * Long.BYTES;
    private static final int CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3;

    private final CUdeviceptr device;
    private final long deviceAddress;
    private final Pointer host;
    private final ByteBuffer mirror;
    private int next;

    private GuardSlots(CUdeviceptr device, long deviceAddress, Pointer host) {
        this.device = device;
        this.deviceAddress = deviceAddress;
        this.host = host;
        this.mirror = host.getByteBuffer(0, (long) SLOTS * SLOT_BYTES).order(ByteOrder.nativeOrder());
    }

    /** Allocates the words of {@code owner} (a stream); the caller's context is current. */
    static GuardSlots allocate(String owner) {
        CUdeviceptr d = new CUdeviceptr();
        CudaErrors.check(JCudaDriver.cuMemAlloc(d, (long) SLOTS * SLOT_BYTES), "cuMemAlloc of the IR guard words of " + owner);
        long[] address = new long[1];
        int r = JCudaDriver.cuPointerGetAttribute(Pointer.to(address), CU_POINTER_ATTRIBUTE_DEVICE_POINTER, d);
        if (r != CudaErrors.CUDA_SUCCESS) {
            JCudaDriver.cuMemFree(d);
            throw CudaErrors.error(r, "cuPointerGetAttribute(DEVICE_POINTER) of the IR guard words of " + owner);
        }
        Pointer h = new Pointer();
        r = JCudaDriver.cuMemAllocHost(h, (long) SLOTS * SLOT_BYTES);
        if (r != CudaErrors.CUDA_SUCCESS) {
            JCudaDriver.cuMemFree(d);
            throw CudaErrors.error(r, "cuMemAllocHost of the IR guard words of " + owner);
        }
        return new GuardSlots(d, address[0], h);
    }

    /** The next slot, round-robin. */
    int take() {
        int slot = next;
        next = (next + 1) % SLOTS;
        return slot;
    }

    /** The slot's two device words (8-byte aligned: cuMemAlloc bases are, and slots are 16 bytes). */
    CUdeviceptr device(int slot) {
        return device.withByteOffset((long) slot * SLOT_BYTES);
    }

    /** The slot's device address, as a launch passes it (like a buffer argument, see {@link PackedArgs}). */
    long address(int slot) {
        return deviceAddress + (long) slot * SLOT_BYTES;
    }

    /** Where the slot is copied back to. */
    Pointer host(int slot) {
        return host.withByteOffset((long) slot * SLOT_BYTES);
    }

    /** Word {@code i} (0 or 1) of the slot's host mirror. */
    long word(int slot, int i) {
        return mirror.getLong(slot * SLOT_BYTES + i * Long.BYTES);
    }

    /** Frees both sides; the caller's context is current and no launch uses them any more. */
    @Override
    public void close() {
        JCudaDriver.cuMemFree(device);
        JCudaDriver.cuMemFreeHost(host);
    }
}
