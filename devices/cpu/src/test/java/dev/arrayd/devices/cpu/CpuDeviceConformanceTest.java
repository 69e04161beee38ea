package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.conformance.AbstractDeviceConformanceTest;

import java.util.List;

/** The shared device suite on the CPU backend. */
class CpuDeviceConformanceTest extends AbstractDeviceConformanceTest {

    @Override
    protected Backend createBackend() {
        return new CpuBackend();
    }

    @Override
    public KernelSource kernelSource(String kernel) {
        return new KernelSource(Dialect.C, CpuKernels.source(kernel), List.of(cannedSignature(kernel)));
    }
}
