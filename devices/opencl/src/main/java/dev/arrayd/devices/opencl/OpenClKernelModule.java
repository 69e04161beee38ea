package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.support.RefCountedModule;
import org.jocl.CL;
import org.jocl.cl_program;


/**
 * Programs built from one source, one per context ({@code programs[context index]}), and the kernel
 * pools of their entry points. An enqueued launch keeps what it uses alive inside the driver, so
 * launches hold the module ({@link RefCountedModule}) only while they borrow a kernel object and
 * enqueue; closing releases everything once no launcher holds it.
 */
final class OpenClKernelModule extends RefCountedModule {

    private final ClContext[] contexts; // [context index]: the contexts built for, null where none
    private final cl_program[] programs;
    private final KernelPool[][] pools; // [context index][kernel index]

    OpenClKernelModule(ClContext[] contexts, cl_program[] programs, KernelPool[][] pools, String diagnostics) {
        super(diagnostics);
        this.contexts = contexts;
        this.programs = programs;
        this.pools = pools;
    }

    /** The pool of entry {@code kernel} in {@code context}; null when the module was not built there. */
    KernelPool pool(ClContext context, int kernel) {
        int at = context.index();
        if (at >= contexts.length || contexts[at] != context || kernel >= pools[at].length) {
            return null;
        }
        return pools[at][kernel];
    }

    @Override
    protected void unload() {
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
