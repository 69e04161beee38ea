package dev.arrayd.devices.api;

import java.util.Set;

/** Turns source into a {@link KernelModule} for one backend (Rune's {@code Compiler}). */
public interface KernelCompiler {

    Set<Dialect> dialects();

    /**
     * Compiles every entry point of {@code source} in one compiler invocation.
     *
     * @throws CompileException with the compiler's diagnostics when the source does not compile
     * @throws ArraydException  INVALID_ARGUMENT for an unsupported dialect or a bad signature
     */
    KernelModule compile(KernelSource source);
}
