package dev.arrayd.devices.api;

import java.util.List;

/** The result of one compilation: entry points sharing one native artifact. */
public interface KernelModule extends AutoCloseable {

    List<Kernel> kernels();

    /** Compiler warnings; empty when there were none. */
    String diagnostics();

    /** Whether the artifact came from the backend's compile cache (no compiler ran for this request). */
    default boolean cacheHit() {
        return false;
    }

    /** Unloads the artifact once no launch uses it any more. */
    @Override
    void close();
}
