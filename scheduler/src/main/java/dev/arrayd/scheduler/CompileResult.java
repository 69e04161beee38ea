package dev.arrayd.scheduler;

import java.util.List;

/**
 * The kernels of one compiled module, its compiler warnings and the backends it was built for.
 * {@code cacheHit}: every backend served it from its compile cache (no compiler ran for this request).
 */
public record CompileResult(List<CompiledKernel> kernels, String diagnostics, List<String> backends, boolean cacheHit) {

    public CompileResult {
        kernels = List.copyOf(kernels);
        backends = List.copyOf(backends);
    }

    public CompileResult(List<CompiledKernel> kernels, String diagnostics, List<String> backends) {
        this(kernels, diagnostics, backends, false);
    }
}
