package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelModule;
import org.jocl.CL;
import org.jocl.cl_program;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Programs built from one source, one per context ({@code programs[context index]}), and the kernel
 * pools of their entry points. An enqueued launch keeps what it uses alive inside the driver, so
 * launches hold the module ({@link #acquire()} / {@link #release()}) only while they borrow a
 * kernel object and enqueue; {@link #close()} releases everything once no launcher holds it.
 */
final class OpenClKernelModule implements KernelModule {

    private static final int CLOSED = 1 << 30;

    private final ClContext[] contexts; // [context index]: the contexts built for, null where none
    private final cl_program[] programs;
    private final KernelPool[][] pools; // [context index][kernel index]
    private final String diagnostics;
    private final AtomicInteger state = new AtomicInteger(); // launchers inside, | CLOSED once closed
    private volatile List<Kernel> kernels = List.of();

    OpenClKernelModule(ClContext[] contexts, cl_program[] programs, KernelPool[][] pools, String diagnostics) {
        this.contexts = contexts;
        this.programs = programs;
        this.pools = pools;
        this.diagnostics = diagnostics;
    }

    void setKernels(List<Kernel> kernels) {
        this.kernels = List.copyOf(kernels);
    }

    @Override
    public List<Kernel> kernels() {
        return kernels;
    }

    @Override
    public String diagnostics() {
        return diagnostics;
    }

    /** The pool of entry {@code kernel} in {@code context}; null when the module was not built there. */
    KernelPool pool(ClContext context, int kernel) {
        int at = context.index();
        if (at >= contexts.length || contexts[at] != context || kernel >= pools[at].length) {
            return null;
        }
        return pools[at][kernel];
    }

    /** False once closed. */
    boolean acquire() {
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

    void release() {
        if (state.decrementAndGet() == CLOSED) {
            releaseNative();
        }
    }

    @Override
    public void close() {
        int before = state.getAndUpdate(s -> s | CLOSED);
        if (before == 0) {
            releaseNative();
        }
    }

    private void releaseNative() {
        for (KernelPool[] perContext : pools) {
            for (KernelPool pool : perContext) {
                pool.releaseAll();
            }
        }
        for (cl_program p : programs) {
            if (p != null) {
                CL.clReleaseProgram(p);
            }
        }
    }
}
