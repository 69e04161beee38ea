package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.support.PoolTable;
import jcuda.driver.CUdeviceptr;

/**
 * One slab: a whole {@code cuMemAlloc} allocation. Buffers of the scheduler are byte offsets inside
 * it; {@code address} is the raw device address of its base, so a kernel argument is just
 * {@code address + offset} (no JCuda object per launch).
 */
record CudaSlab(int poolId, CUdeviceptr ptr, long address, long bytes) implements PoolTable.Slab {

    CUdeviceptr at(long offset) {
        return offset == 0 ? ptr : ptr.withByteOffset(offset);
    }
}
