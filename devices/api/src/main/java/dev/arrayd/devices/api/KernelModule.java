package dev.arrayd.devices.api;

import java.util.List;

/** The result of one compilation: entry points sharing one native artifact. */
public interface KernelModule extends AutoCloseable {

    List<Kernel> kernels();

    /** Compiler warnings; empty when there were none. */
    String diagnostics();

    /** Unloads the artifact once no launch uses it any more. */
    @Override
    void close();
}
