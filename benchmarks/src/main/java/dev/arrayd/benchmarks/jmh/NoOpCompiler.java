package dev.arrayd.benchmarks.jmh;

import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelCompiler;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import java.util.List;
import java.util.Set;

/** "Compiles" any C source into kernels that {@link NoOpStream} never runs: only their signatures matter. */
final class NoOpCompiler implements KernelCompiler {

    private record NoOpKernel(KernelSignature signature) implements Kernel {
        @Override
        public String backend() {
            return NoOpDevice.BACKEND;
        }
    }

    @Override
    public Set<Dialect> dialects() {
        return Set.of(Dialect.C);
    }

    @Override
    public KernelModule compile(KernelSource source) {
        List<Kernel> kernels = source.entryPoints().stream().<Kernel>map(NoOpKernel::new).toList();
        return new KernelModule() {
            @Override
            public List<Kernel> kernels() {
                return kernels;
            }

            @Override
            public String diagnostics() {
                return "";
            }

            @Override
            public void close() {
            }
        };
    }
}
