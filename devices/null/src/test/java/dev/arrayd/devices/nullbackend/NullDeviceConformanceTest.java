package dev.arrayd.devices.nullbackend;

import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.conformance.AbstractDeviceConformanceTest;
import java.util.List;
import java.util.Map;

/** The shared device suite on the null backend, with the canned kernels written in Java ({@link CannedJavaKernels}). */
class NullDeviceConformanceTest extends AbstractDeviceConformanceTest {

    @Override
    protected Backend createBackend() {
        return new NullBackend(NullOptions.defaults().withMemoryBytes(256L << 20).withBehaviour(new CannedJavaKernels()));
    }

    @Override
    public KernelSource kernelSource(String kernel) {
        return new KernelSource(Dialect.C, "kernels of the null backend: " + kernel, List.of(cannedSignature(kernel)));
    }

    @Override
    protected Map<String, String> unsupported() {
        return Map.of("compileErrorNamesTheUsersLine", "the null backend compiles nothing: it has no compile errors to"
                + " point at a line (it refuses only a source that does not name an entry point)");
    }
}
