package dev.arrayd.devices.nullbackend;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CompileException;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelCompiler;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.ir.IrValidator;
import dev.arrayd.devices.api.support.EntryPoints;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * "Compiles" without a compiler: checks what every backend checks (entry points; an IR module with the IR
 * validator) and that native source names each entry point it declares (as a linker would), then returns a
 * module of {@link NullKernel}s. Counts the modules loaded (made and not yet unloaded).
 */
final class NullCompiler implements KernelCompiler {

    private final Set<Dialect> dialects;
    private final AtomicInteger loaded = new AtomicInteger();

    NullCompiler(Set<Dialect> dialects) {
        this.dialects = Set.copyOf(dialects);
    }

    @Override
    public Set<Dialect> dialects() {
        return dialects;
    }

    @Override
    public KernelModule compile(KernelSource source) {
        if (!dialects.contains(source.dialect())) {
            throw ArraydException.invalid("dialect: " + source.dialect() + " (expected: one of " + dialects + ")");
        }
        EntryPoints.check(source.entryPoints(), "entryPoints");
        if (source.ir() != null) {
            IrValidator.check(source.ir(), "ir");
        } else {
            for (KernelSignature sig : source.entryPoints()) {
                if (!source.source().contains(sig.name())) {
                    throw new CompileException("no kernel '" + sig.name() + "' in the source",
                            "source:1: error: no kernel '" + sig.name() + "'");
                }
            }
        }
        NullModule module = new NullModule(loaded);
        List<Kernel> kernels = new ArrayList<>();
        for (KernelSignature sig : source.entryPoints()) {
            kernels.add(new NullKernel(sig, module));
        }
        module.setKernels(kernels);
        return module;
    }

    /** Modules made and not yet unloaded. */
    int loadedModules() {
        return loaded.get();
    }
}
