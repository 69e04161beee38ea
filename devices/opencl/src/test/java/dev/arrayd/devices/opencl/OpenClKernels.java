package dev.arrayd.devices.opencl;

/** The conformance suite's canned kernels in arrayd's OpenCL C convention ({@code ARRAYD_KERNEL} functions). */
final class OpenClKernels {

    private OpenClKernels() {}

    static String source(String kernel) {
        return switch (kernel) {
            case "vadd" -> """
                    ARRAYD_KERNEL void vadd(__global const float *a, __global const float *b, __global float *c, int n) {
                        size_t i = get_global_id(0);
                        if (i < n) c[i] = a[i] + b[i];
                    }
                    """;
            case "axpy_f64" -> """
                    ARRAYD_KERNEL void axpy_f64(double a, __global const double *x, __global double *y, long n) {
                        long i = get_global_id(0);
                        if (i < n) y[i] = a * x[i] + y[i];
                    }
                    """;
            case "index3d" -> """
                    ARRAYD_KERNEL void index3d(__global long *out) {
                        long lin = ((long) get_global_id(2) * get_global_size(1) + get_global_id(1))
                                * get_global_size(0) + get_global_id(0);
                        out[3 * lin] = lin;
                        out[3 * lin + 1] = (long) get_local_id(0) | (long) get_local_id(1) << 16 | (long) get_local_id(2) << 32;
                        out[3 * lin + 2] = (long) get_group_id(0) | (long) get_group_id(1) << 16 | (long) get_group_id(2) << 32;
                    }
                    """;
            case "scalars" -> """
                    ARRAYD_KERNEL void scalars(float a, double b, int c, long d, uchar e,
                            __global float *oa, __global double *ob, __global int *oc, __global long *od, __global uchar *oe) {
                        if (get_global_id(0) != 0) return;
                        oa[0] = a; ob[0] = b; oc[0] = c; od[0] = d; oe[0] = e;
                    }
                    """;
            case "step" -> """
                    ARRAYD_KERNEL void step(__global long *acc, long k) {
                        if (get_global_id(0) == 0) acc[0] = (long) ((ulong) acc[0] * 31u + (ulong) k);
                    }
                    """;
            case "empty" -> """
                    ARRAYD_KERNEL void empty(void) {
                    }
                    """;
            case "compile_error" -> """
                    ARRAYD_KERNEL void compile_error(void) {
                        long i = get_global_id(0);
                        i = this_is_not_declared + 1;
                    }
                    """;
            default -> throw new IllegalArgumentException("canned kernel: " + kernel);
        };
    }
}
