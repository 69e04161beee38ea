package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.ir.IrDifferentialSuite;

/**
 * The shared random differential suite on every OpenCL device (PoCL in CI: kernel {@code i} of a try
 * runs on device {@code i % devices}). Skipped, with the reason printed, where there is no OpenCL
 * runtime; {@code .ci/run} fails the build if that happens there.
 */
class OpenClIrDifferentialProperties extends IrDifferentialSuite {

    @Override
    protected Backend createBackend() {
        return new OpenClBackend();
    }

    /**
     * Fewer kernels per try than on the CPU: PoCL builds each kernel, then compiles it again for its
     * first launch on a device, about 0.35 s a kernel on a 2-core machine (12 + 6 tries of 4 kernels
     * take about 30 s there).
     */
    @Override
    protected int kernelsPerTry() {
        return 4;
    }

    /**
     * PoCL 3.1 mis-compiles floor, ceil, rint, exp and tanh of a NaN it can see at build time, a NaN
     * constant or constants that fold to one (docs/kernels.md, "A PoCL quirk"); NaNs that arrive at
     * run time stay covered.
     */
    @Override
    protected boolean nanConstants() {
        return false;
    }
}
