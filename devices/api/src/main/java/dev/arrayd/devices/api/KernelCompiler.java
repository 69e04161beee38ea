package dev.arrayd.devices.api;

import java.util.ArrayList;
import java.util.List;
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

    /**
     * Compiles several modules in one call, all or none (on failure nothing stays loaded). A backend
     * may build them in fewer compiler invocations than modules (the CPU backend builds IR modules
     * in one gcc run); the default compiles them one by one.
     */
    default List<KernelModule> compileAll(List<KernelSource> sources) {
        List<KernelModule> out = new ArrayList<>(sources.size());
        try {
            for (KernelSource s : sources) {
                out.add(compile(s));
            }
        } catch (RuntimeException e) {
            out.forEach(KernelModule::close);
            throw e;
        }
        return out;
    }
}
