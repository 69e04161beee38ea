package dev.arrayd.devices.opencl;

import org.jocl.CL;
import org.jocl.cl_kernel;
import org.jocl.cl_program;

import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * {@code cl_kernel} objects of one entry point in one context. {@code clSetKernelArg} is the one
 * OpenCL call that is not thread-safe on a shared object, and argument values are captured at
 * enqueue time, so a launcher borrows a kernel object, sets its arguments, enqueues and gives it
 * back: as many objects as launches ever ran at once, and no locks.
 */
final class KernelPool {

    private final cl_program program;
    private final String entry;
    private final ConcurrentLinkedQueue<cl_kernel> idle = new ConcurrentLinkedQueue<>();

    KernelPool(cl_program program, String entry) {
        this.program = program;
        this.entry = entry;
    }

    /** One kernel object made up front: proves the entry exists before the module is handed out. */
    void prime() {
        idle.offer(CL.clCreateKernel(program, entry, null));
    }

    cl_kernel borrow() {
        cl_kernel k = idle.poll();
        return k != null ? k : CL.clCreateKernel(program, entry, null);
    }

    void giveBack(cl_kernel kernel) {
        idle.offer(kernel);
    }

    /** Only once no launcher holds one (the module's count is zero). */
    void releaseAll() {
        cl_kernel k;
        while ((k = idle.poll()) != null) {
            CL.clReleaseKernel(k);
        }
    }
}
