package dev.arrayd.devices.cuda;

import java.lang.foreign.MemorySegment;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;

/**
 * Host memory the GPU's copy engines can read and write directly: page-locked by {@code cuMemAllocHost} or
 * registered with {@code cuMemHostRegister} (by arrayd or by another library in the process). A transfer
 * from or to such memory needs no staging: one DMA at the bus's full speed, no host copy. Asking costs
 * about a microsecond, so only transfers of at least {@link #MIN_BYTES} ask.
 *
 * <p>Were the answer wrong (memory unregistered meanwhile), the copy would still be correct: the driver
 * copies pageable memory itself, only synchronously and slower.
 */
final class PageLocked {

    /** Below this a staged copy is as fast as the question. */
    static final long MIN_BYTES = 64 << 10;

    private static final int CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2;
    private static final int CU_MEMORYTYPE_HOST = 1;

    private PageLocked() {}

    /** A pointer to {@code segment} when all of it is page-locked (first and last byte) and worth asking about; else null. */
    static Pointer of(MemorySegment segment) {
        if (!segment.isNative() || segment.byteSize() < MIN_BYTES || segment.byteSize() > Integer.MAX_VALUE) {
            return null;
        }
        long address = segment.address();
        if (!isPageLocked(address) || !isPageLocked(address + segment.byteSize() - 1)) {
            return null;
        }
        return Pointer.to(segment.asByteBuffer());
    }

    private static boolean isPageLocked(long address) {
        int[] type = new int[1];
        CUdeviceptr at = new CUdeviceptr().withByteOffset(address);
        return JCudaDriver.cuPointerGetAttribute(Pointer.to(type), CU_POINTER_ATTRIBUTE_MEMORY_TYPE, at) == CudaErrors.CUDA_SUCCESS
                && type[0] == CU_MEMORYTYPE_HOST;
    }
}
