package dev.arrayd.devices.cuda;

/** The conformance suite's canned kernels in arrayd's CUDA C convention (see {@link CudaSourceAssembler}). */
final class CudaKernels {

    private CudaKernels() {}

    static String source(String kernel) {
        return switch (kernel) {
            case "vadd" -> """
                    extern "C" __global__ void vadd(const float *a, const float *b, float *c, int32_t n) {
                        long long i = arrayd_global_id(0);
                        if (i < n) c[i] = a[i] + b[i];
                    }
                    """;
            case "axpy_f64" -> """
                    extern "C" __global__ void axpy_f64(double a, const double *x, double *y, int64_t n) {
                        long long i = arrayd_global_id(0);
                        if (i < n) y[i] = a * x[i] + y[i];
                    }
                    """;
            case "index3d" -> """
                    extern "C" __global__ void index3d(int64_t *out) {
                        int64_t lin = (arrayd_global_id(2) * arrayd_global_size(1) + arrayd_global_id(1))
                                * arrayd_global_size(0) + arrayd_global_id(0);
                        out[3 * lin] = lin;
                        out[3 * lin + 1] = arrayd_local_id(0) | arrayd_local_id(1) << 16 | arrayd_local_id(2) << 32;
                        out[3 * lin + 2] = arrayd_group_id(0) | arrayd_group_id(1) << 16 | arrayd_group_id(2) << 32;
                    }
                    """;
            case "scalars" -> """
                    extern "C" __global__ void scalars(float a, double b, int32_t c, int64_t d, uint8_t e,
                            float *oa, double *ob, int32_t *oc, int64_t *od, uint8_t *oe) {
                        if (arrayd_global_id(0) != 0) return;
                        oa[0] = a; ob[0] = b; oc[0] = c; od[0] = d; oe[0] = e;
                    }
                    """;
            case "step" -> """
                    extern "C" __global__ void step(int64_t *acc, int64_t k) {
                        if (arrayd_global_id(0) == 0) acc[0] = (int64_t) ((uint64_t) acc[0] * 31u + (uint64_t) k);
                    }
                    """;
            case "empty" -> """
                    extern "C" __global__ void empty() {
                    }
                    """;
            case "compile_error" -> """
                    extern "C" __global__ void compile_error() {
                        long long i = arrayd_global_id(0);
                        i = this_is_not_declared + 1;
                    }
                    """;
            default -> throw new IllegalArgumentException("canned kernel: " + kernel);
        };
    }
}
