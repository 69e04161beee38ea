package dev.arrayd.benchmarks;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jocl.CL;
import org.jocl.CLException;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_command_queue;
import org.jocl.cl_context;
import org.jocl.cl_context_properties;
import org.jocl.cl_device_id;
import org.jocl.cl_event;
import org.jocl.cl_kernel;
import org.jocl.cl_mem;
import org.jocl.cl_platform_id;
import org.jocl.cl_program;

/**
 * The anchor of {@code bench kernels}: the same OpenCL C run directly through JOCL in this process,
 * as a user without arrayd would: its own context, in-order queue (with profiling, like arrayd's) and
 * buffers, plain {@code __kernel} functions ({@link BenchKernels#plainOpenCl()}), one
 * {@code clEnqueueNDRangeKernel} per pass and {@code clFinish}. No daemon, no gRPC, no scheduler.
 *
 * <p>Only constructed after {@link OpenClProbe} found the ICD loader.
 */
final class JoclKernelColumn implements KernelColumn {

    private final String key;
    private final String label;
    private final cl_context context;
    private final cl_command_queue queue;
    private final cl_program program;
    private final Map<String, cl_kernel> kernels = new HashMap<>();
    private final cl_kernel empty;
    private final List<cl_mem> buffers = new ArrayList<>();
    private KernelWorkload current;

    /** Opens OpenCL device {@code index}, counting every device of every platform in order (as arrayd does). */
    JoclKernelColumn(String key, int index) {
        CL.setExceptionsEnabled(true);
        DeviceRef ref = devices().get(index);
        this.key = key;
        this.label = "direct JOCL, " + ref.name();
        cl_context_properties props = new cl_context_properties();
        props.addProperty(CL.CL_CONTEXT_PLATFORM, ref.platform());
        context = CL.clCreateContext(props, 1, new cl_device_id[] {ref.device()}, null, null, null);
        queue = CL.clCreateCommandQueue(context, ref.device(), CL.CL_QUEUE_PROFILING_ENABLE, null);
        program = CL.clCreateProgramWithSource(context, 1, new String[] {BenchKernels.plainOpenCl()}, null, null);
        try {
            CL.clBuildProgram(program, 0, null, null, null, null);
        } catch (CLException e) {
            throw new IllegalStateException("clBuildProgram failed: " + buildLog(ref.device()), e);
        }
        for (var spec : BenchKernels.SPECS) {
            kernels.put(spec.name(), CL.clCreateKernel(program, spec.name(), null));
        }
        empty = kernels.get(BenchKernels.EMPTY);
    }

    private record DeviceRef(cl_platform_id platform, cl_device_id device, String name) {}

    /** The names of every device of every platform, in arrayd's {@code opencl:N} order. */
    static List<String> deviceNames() {
        CL.setExceptionsEnabled(true);
        return devices().stream().map(DeviceRef::name).toList();
    }

    private static List<DeviceRef> devices() {
        int[] count = new int[1];
        try {
            CL.clGetPlatformIDs(0, null, count);
        } catch (CLException e) {
            return List.of(); // CL_PLATFORM_NOT_FOUND_KHR: a loader without drivers
        }
        cl_platform_id[] platforms = new cl_platform_id[count[0]];
        CL.clGetPlatformIDs(platforms.length, platforms, null);
        List<DeviceRef> out = new ArrayList<>();
        for (cl_platform_id p : platforms) {
            int[] n = new int[1];
            try {
                CL.clGetDeviceIDs(p, CL.CL_DEVICE_TYPE_ALL, 0, null, n);
            } catch (CLException e) {
                continue; // CL_DEVICE_NOT_FOUND
            }
            cl_device_id[] ds = new cl_device_id[n[0]];
            CL.clGetDeviceIDs(p, CL.CL_DEVICE_TYPE_ALL, ds.length, ds, null);
            for (cl_device_id d : ds) {
                out.add(new DeviceRef(p, d, deviceName(d)));
            }
        }
        return out;
    }

    private static String deviceName(cl_device_id d) {
        long[] size = new long[1];
        CL.clGetDeviceInfo(d, CL.CL_DEVICE_NAME, 0, null, size);
        byte[] bytes = new byte[(int) size[0]];
        CL.clGetDeviceInfo(d, CL.CL_DEVICE_NAME, bytes.length, Pointer.to(bytes), null);
        return new String(bytes, 0, Math.max(0, bytes.length - 1), java.nio.charset.StandardCharsets.UTF_8).trim();
    }

    private String buildLog(cl_device_id device) {
        try {
            long[] size = new long[1];
            CL.clGetProgramBuildInfo(program, device, CL.CL_PROGRAM_BUILD_LOG, 0, null, size);
            byte[] bytes = new byte[(int) size[0]];
            CL.clGetProgramBuildInfo(program, device, CL.CL_PROGRAM_BUILD_LOG, bytes.length, Pointer.to(bytes), null);
            return new String(bytes, java.nio.charset.StandardCharsets.UTF_8).trim();
        } catch (CLException e) {
            return "(no build log: " + e.getMessage() + ")";
        }
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public String label() {
        return label;
    }

    @Override
    public void prepare(KernelWorkload w) {
        releaseBuffers();
        for (float[] init : w.buffers()) {
            buffers.add(CL.clCreateBuffer(context, CL.CL_MEM_READ_WRITE, (long) init.length * Sizeof.cl_float, null, null));
        }
        // arguments are set once: every run of the workload launches the same kernels on the same buffers
        for (KernelWorkload.Pass p : w.passes()) {
            cl_kernel k = kernels.get(p.entry());
            for (int i = 0; i < p.args().size(); i++) {
                switch (p.args().get(i)) {
                    case KernelWorkload.Buf(int index) ->
                            CL.clSetKernelArg(k, i, Sizeof.cl_mem, Pointer.to(buffers.get(index)));
                    case Float f -> CL.clSetKernelArg(k, i, Sizeof.cl_float, Pointer.to(new float[] {f}));
                    case Integer n -> CL.clSetKernelArg(k, i, Sizeof.cl_int, Pointer.to(new int[] {n}));
                    default -> throw new IllegalArgumentException("argument " + i + " of " + p.entry() + ": "
                            + p.args().get(i));
                }
            }
        }
        current = w;
    }

    @Override
    public float[] runOnceAndRead(KernelWorkload w) {
        for (int i = 0; i < buffers.size(); i++) {
            float[] init = w.buffers().get(i);
            CL.clEnqueueWriteBuffer(queue, buffers.get(i), CL.CL_TRUE, 0, (long) init.length * Sizeof.cl_float,
                    Pointer.to(init), 0, null, null);
        }
        run();
        float[] out = new float[w.buffers().get(w.output()).length];
        CL.clEnqueueReadBuffer(queue, buffers.get(w.output()), CL.CL_TRUE, 0, (long) out.length * Sizeof.cl_float,
                Pointer.to(out), 0, null, null);
        return out;
    }

    @Override
    public LaunchTime run() {
        List<KernelWorkload.Pass> passes = current.passes();
        cl_event[] events = new cl_event[passes.size()];
        long t0 = System.nanoTime();
        for (int i = 0; i < events.length; i++) {
            KernelWorkload.Pass p = passes.get(i);
            events[i] = new cl_event();
            CL.clEnqueueNDRangeKernel(queue, kernels.get(p.entry()), p.global().length, null, p.global(), null, 0, null,
                    events[i]);
        }
        CL.clFinish(queue);
        long wall = System.nanoTime() - t0;
        long device = 0;
        long[] start = new long[1];
        long[] end = new long[1];
        for (cl_event e : events) {
            CL.clGetEventProfilingInfo(e, CL.CL_PROFILING_COMMAND_START, Sizeof.cl_ulong, Pointer.to(start), null);
            CL.clGetEventProfilingInfo(e, CL.CL_PROFILING_COMMAND_END, Sizeof.cl_ulong, Pointer.to(end), null);
            device += end[0] - start[0];
            CL.clReleaseEvent(e);
        }
        return new LaunchTime(wall, device);
    }

    /** Enqueue and finish, nothing else: no event object, no profiling query. */
    @Override
    public long emptyRoundTripNanos() {
        long[] one = {1};
        long t0 = System.nanoTime();
        CL.clEnqueueNDRangeKernel(queue, empty, 1, null, one, null, 0, null, null);
        CL.clFinish(queue);
        return System.nanoTime() - t0;
    }

    private void releaseBuffers() {
        for (cl_mem m : buffers) {
            CL.clReleaseMemObject(m);
        }
        buffers.clear();
        current = null;
    }

    @Override
    public void close() {
        releaseBuffers();
        for (cl_kernel k : kernels.values()) {
            CL.clReleaseKernel(k);
        }
        CL.clReleaseProgram(program);
        CL.clReleaseCommandQueue(queue);
        CL.clReleaseContext(context);
    }
}
