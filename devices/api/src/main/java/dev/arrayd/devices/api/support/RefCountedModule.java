package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelModule;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A compiled module whose native artifact (a loaded library, OpenCL programs, CUDA modules) is released
 * only once nothing uses it: unloading under a running launch would crash the process. Launches hold the
 * module ({@link #acquire()} / {@link #release()}) while they use it; {@link #close()} only marks it
 * closed, and the last holder to let go {@link #unload() unloads} it. Launches after close are refused
 * ({@code acquire} is false).
 */
public abstract class RefCountedModule implements KernelModule {

    private static final int CLOSED = 1 << 30;

    private final String diagnostics;
    /** Holders (launches in flight), with {@link #CLOSED} set once closed. */
    private final AtomicInteger state = new AtomicInteger();
    private volatile List<Kernel> kernels = List.of();

    protected RefCountedModule(String diagnostics) {
        this.diagnostics = diagnostics;
    }

    /** Sets the entry points, once the kernels referring to this module are made. */
    public final void setKernels(List<Kernel> kernels) {
        this.kernels = List.copyOf(kernels);
    }

    @Override
    public final List<Kernel> kernels() {
        return kernels;
    }

    @Override
    public final String diagnostics() {
        return diagnostics;
    }

    /** Holds the module for a launch; false once it is closed (the launch must be refused). */
    public final boolean acquire() {
        for (;;) {
            int s = state.get();
            if ((s & CLOSED) != 0) {
                return false;
            }
            if (state.compareAndSet(s, s + 1)) {
                return true;
            }
        }
    }

    /** Lets go of a hold; true when this was the last one after close, and the module was unloaded. */
    public final boolean release() {
        if (state.decrementAndGet() == CLOSED) {
            unload();
            return true;
        }
        return false;
    }

    public final boolean isClosed() {
        return (state.get() & CLOSED) != 0;
    }

    @Override
    public final void close() {
        int before = state.getAndUpdate(s -> s | CLOSED);
        if (before == 0) {
            unload();
        }
    }

    /** Releases the native artifact: exactly once, when closed and no longer held. */
    protected abstract void unload();
}
