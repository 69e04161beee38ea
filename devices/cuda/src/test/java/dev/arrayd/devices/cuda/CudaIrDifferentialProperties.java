package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.ir.IrDifferentialSuite;

/**
 * The shared random differential suite on every CUDA device (kernel {@code i} of a try runs on device
 * {@code i % devices}): random IR kernels rendered to CUDA C, compiled by NVRTC, against the reference
 * interpreter. Skipped, with the reason printed, where there is no GPU (the GPU check kit runs it where
 * there is one).
 */
class CudaIrDifferentialProperties extends IrDifferentialSuite {

    @Override
    protected Backend createBackend() {
        return new CudaBackend();
    }
}
