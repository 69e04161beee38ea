package dev.arrayd.scheduler;

import java.util.List;

/** The kernels of one compiled module, its compiler warnings and the backends it was built for. */
public record CompileResult(List<CompiledKernel> kernels, String diagnostics, List<String> backends) {

    public CompileResult {
        kernels = List.copyOf(kernels);
        backends = List.copyOf(backends);
    }
}
