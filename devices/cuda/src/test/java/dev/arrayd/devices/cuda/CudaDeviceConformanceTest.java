package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.conformance.AbstractDeviceConformanceTest;

import java.util.List;

/**
 * The shared device suite on the CUDA backend, with the canned kernels in CUDA C (so it needs NVRTC).
 * Without a driver or a GPU every test is skipped with the backend's reason printed.
 */
class CudaDeviceConformanceTest extends AbstractDeviceConformanceTest {

    @Override
    protected Backend createBackend() {
        return new CudaBackend();
    }

    @Override
    public KernelSource kernelSource(String kernel) {
        return new KernelSource(Dialect.CUDA_C, CudaKernels.source(kernel), List.of(cannedSignature(kernel)));
    }

    /** NVRTC names the user's file and line as {@code kernel.cu(3): error: ...}. */
    @Override
    public String errorLineMarker(int line) {
        return CudaSourceAssembler.USER_FILE + "(" + line + ")";
    }
}
