package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.Backend;

/**
 * The shared device suite on the CPU backend with kernels at the daemon's priority ({@code --cpu-nice 0}):
 * the stream workers call back themselves, without the device's {@link CompletionThread}, which the
 * default settings (and so {@link CpuDeviceConformanceTest}) use.
 */
class CpuDeviceUnloweredConformanceTest extends CpuDeviceConformanceTest {

    @Override
    protected Backend createBackend() {
        return new CpuBackend(CpuOptions.defaults().withComputeNice(0));
    }
}
