package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.conformance.AbstractDeviceConformanceTest;

import java.util.List;

/**
 * The shared device suite on the first OpenCL device (PoCL in CI). Skipped, with the reason
 * printed, where there is no OpenCL runtime; {@code .ci/run} fails the build if that happens there.
 */
class OpenClDeviceConformanceTest extends AbstractDeviceConformanceTest {

    @Override
    protected Backend createBackend() {
        return new OpenClBackend();
    }

    @Override
    public KernelSource kernelSource(String kernel) {
        return new KernelSource(Dialect.OPENCL_C, OpenClKernels.source(kernel), List.of(cannedSignature(kernel)));
    }
}
