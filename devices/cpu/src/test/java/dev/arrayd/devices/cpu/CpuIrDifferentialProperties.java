package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.ir.IrDifferentialSuite;

/**
 * The shared random differential suite on the CPU backend: 8 kernels per try, one gcc run each
 * (glibc's expf, logf, tanhf and powf account for the ulps the suite allows).
 */
class CpuIrDifferentialProperties extends IrDifferentialSuite {

    @Override
    protected Backend createBackend() {
        return new CpuBackend(CpuOptions.defaults());
    }
}
