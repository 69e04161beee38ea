package dev.arrayd.devices.opencl;

import org.jocl.CL;
import org.jocl.Pointer;
import org.jocl.cl_mem;

import java.util.ArrayDeque;

/**
 * One stream's zeroed guard records ({@link LaunchGuard#BYTES} each) for launches of IR kernels that
 * kept a guard. A record comes back clean from nearly every launch (no guard caught anything), so it
 * is reused as it is, with no zeroing enqueue; one that caught an index, or whose launch failed, is
 * released and a fresh zeroed one made when needed. Launches of kernels without guards never touch
 * this. Used by the stream's worker thread only.
 */
final class GuardBuffers {

    private final OpenClDevice device;
    private final ArrayDeque<cl_mem> clean = new ArrayDeque<>();

    GuardBuffers(OpenClDevice device) {
        this.device = device;
    }

    /** A record holding two zero words. */
    cl_mem take() {
        cl_mem m = clean.poll();
        if (m != null) {
            return m;
        }
        return CL.clCreateBuffer(device.context().context(), CL.CL_MEM_READ_WRITE | CL.CL_MEM_COPY_HOST_PTR,
                LaunchGuard.BYTES, Pointer.to(new long[2]), null);
    }

    /**
     * After the launch completed (or failed): {@code stillZero} when its words were read back as zero,
     * so that it can serve the next launch; otherwise it is released (commands still enqueued on it keep
     * it alive inside the driver).
     */
    void giveBack(cl_mem mem, boolean stillZero) {
        if (stillZero && clean.size() < OpenClStream.MAX_IN_FLIGHT) {
            clean.push(mem);
        } else {
            CL.clReleaseMemObject(mem);
        }
    }

    /** Once the stream's queue is finished. */
    void releaseAll() {
        cl_mem m;
        while ((m = clean.poll()) != null) {
            CL.clReleaseMemObject(m);
        }
    }
}
