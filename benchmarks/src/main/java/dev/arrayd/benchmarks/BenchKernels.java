package dev.arrayd.benchmarks;

import dev.arrayd.client.Access;
import dev.arrayd.client.DType;
import dev.arrayd.client.KernelSpec;
import java.util.List;

/**
 * The kernels of {@code bench kernels}, written twice with the same algorithm: C in the CPU backend's
 * convention ({@code ARRAYD_ITEM}, {@code arrayd_global_id}) and OpenCL C in the OpenCL backend's
 * ({@code ARRAYD_KERNEL} functions that arrayd wraps in a {@code __kernel}). The direct JOCL run uses
 * the OpenCL C with {@code ARRAYD_KERNEL} replaced by {@code __kernel} ({@link #plainOpenCl()}): the same
 * text, so the two OpenCL columns differ only in who launches it.
 *
 * <p>Neither convention has work-group local memory today (the CPU's C has no barriers, and OpenCL C
 * 1.2 allows {@code __local} variables only at {@code __kernel} scope, which arrayd generates), so:
 * <ul>
 *   <li>the sum is <b>two-pass and atomic-free</b>: pass one, work-item {@code i} sums its own
 *       contiguous chunk into {@code partial[i]}; pass two, one work-item sums the partials;</li>
 *   <li>the matmul is tiled <b>in registers</b>, not in local memory: work-item {@code (x, y)} computes
 *       a {@value #TILE_M} x {@value #TILE_N} tile of C, reusing each loaded B row segment for
 *       {@value #TILE_M} rows and each A value for {@value #TILE_N} columns.</li>
 * </ul>
 * Softmax is one work-item per row (max, sum of exponentials, scale).
 */
final class BenchKernels {

    /** Rows and columns of C one matmul work-item computes. */
    static final int TILE_M = 2;
    static final int TILE_N = 8;

    static final String C_SOURCE = """
            ARRAYD_KERNEL void empty(ARRAYD_ITEM) { }

            ARRAYD_KERNEL void vadd(ARRAYD_ITEM, const float *a, const float *b, float *c, int32_t n) {
                int64_t i = arrayd_global_id(0);
                if (i < n) c[i] = a[i] + b[i];
            }

            ARRAYD_KERNEL void saxpy(ARRAYD_ITEM, float alpha, const float *x, float *y, int32_t n) {
                int64_t i = arrayd_global_id(0);
                if (i < n) y[i] = alpha * x[i] + y[i];
            }

            ARRAYD_KERNEL void sum_partial(ARRAYD_ITEM, const float *x, float *partial, int32_t n, int32_t chunk) {
                int64_t i = arrayd_global_id(0);
                int64_t lo = i * chunk;
                int64_t hi = lo + chunk < n ? lo + chunk : n;
                float s = 0.0f;
                for (int64_t k = lo; k < hi; k++) s += x[k];
                partial[i] = s;
            }

            ARRAYD_KERNEL void sum_final(ARRAYD_ITEM, const float *partial, float *out, int32_t parts) {
                float s = 0.0f;
                for (int32_t k = 0; k < parts; k++) s += partial[k];
                out[0] = s;
            }

            ARRAYD_KERNEL void matmul(ARRAYD_ITEM, const float *a, const float *b, float *c, int32_t m, int32_t n,
                                      int32_t k) {
                int64_t col = arrayd_global_id(0) * 8;
                int64_t row = arrayd_global_id(1) * 2;
                float acc0[8] = {0}, acc1[8] = {0};
                for (int32_t p = 0; p < k; p++) {
                    float a0 = a[row * k + p];
                    float a1 = a[(row + 1) * k + p];
                    const float *bp = b + (int64_t) p * n + col;
                    for (int t = 0; t < 8; t++) {
                        acc0[t] += a0 * bp[t];
                        acc1[t] += a1 * bp[t];
                    }
                }
                for (int t = 0; t < 8; t++) {
                    c[row * n + col + t] = acc0[t];
                    c[(row + 1) * n + col + t] = acc1[t];
                }
            }

            ARRAYD_KERNEL void softmax(ARRAYD_ITEM, const float *x, float *y, int32_t rows, int32_t cols) {
                int64_t r = arrayd_global_id(0);
                if (r >= rows) return;
                const float *in = x + r * cols;
                float *out = y + r * cols;
                float mx = in[0];
                for (int32_t j = 1; j < cols; j++) mx = fmaxf(mx, in[j]);
                float s = 0.0f;
                for (int32_t j = 0; j < cols; j++) {
                    float e = expf(in[j] - mx);
                    out[j] = e;
                    s += e;
                }
                float inv = 1.0f / s;
                for (int32_t j = 0; j < cols; j++) out[j] *= inv;
            }
            """;

    static final String OPENCL_SOURCE = """
            ARRAYD_KERNEL void empty(void) { }

            ARRAYD_KERNEL void vadd(__global const float *a, __global const float *b, __global float *c, int n) {
                size_t i = get_global_id(0);
                if (i < n) c[i] = a[i] + b[i];
            }

            ARRAYD_KERNEL void saxpy(float alpha, __global const float *x, __global float *y, int n) {
                size_t i = get_global_id(0);
                if (i < n) y[i] = alpha * x[i] + y[i];
            }

            ARRAYD_KERNEL void sum_partial(__global const float *x, __global float *partial, int n, int chunk) {
                long i = get_global_id(0);
                long lo = i * chunk;
                long hi = lo + chunk < n ? lo + chunk : n;
                float s = 0.0f;
                for (long k = lo; k < hi; k++) s += x[k];
                partial[i] = s;
            }

            ARRAYD_KERNEL void sum_final(__global const float *partial, __global float *out, int parts) {
                float s = 0.0f;
                for (int k = 0; k < parts; k++) s += partial[k];
                out[0] = s;
            }

            ARRAYD_KERNEL void matmul(__global const float *a, __global const float *b, __global float *c, int m, int n,
                                      int k) {
                long col = get_global_id(0) * 8;
                long row = get_global_id(1) * 2;
                float acc0[8] = {0}, acc1[8] = {0};
                for (int p = 0; p < k; p++) {
                    float a0 = a[row * k + p];
                    float a1 = a[(row + 1) * k + p];
                    __global const float *bp = b + (long) p * n + col;
                    for (int t = 0; t < 8; t++) {
                        acc0[t] += a0 * bp[t];
                        acc1[t] += a1 * bp[t];
                    }
                }
                for (int t = 0; t < 8; t++) {
                    c[row * n + col + t] = acc0[t];
                    c[(row + 1) * n + col + t] = acc1[t];
                }
            }

            ARRAYD_KERNEL void softmax(__global const float *x, __global float *y, int rows, int cols) {
                long r = get_global_id(0);
                if (r >= rows) return;
                __global const float *in = x + r * cols;
                __global float *out = y + r * cols;
                float mx = in[0];
                for (int j = 1; j < cols; j++) mx = fmax(mx, in[j]);
                float s = 0.0f;
                for (int j = 0; j < cols; j++) {
                    float e = exp(in[j] - mx);
                    out[j] = e;
                    s += e;
                }
                float inv = 1.0f / s;
                for (int j = 0; j < cols; j++) out[j] *= inv;
            }
            """;

    /** Entry point names, as in both sources. */
    static final String EMPTY = "empty";

    /** The declared signatures: the same for both dialects (arrayd checks every launch against them). */
    static final List<KernelSpec> SPECS = List.of(
            KernelSpec.entry(EMPTY),
            KernelSpec.entry("vadd").buffer("a", DType.F32, Access.READ).buffer("b", DType.F32, Access.READ)
                    .buffer("c", DType.F32, Access.WRITE).scalar("n", DType.I32),
            KernelSpec.entry("saxpy").scalar("alpha", DType.F32).buffer("x", DType.F32, Access.READ)
                    .buffer("y", DType.F32, Access.READ_WRITE).scalar("n", DType.I32),
            KernelSpec.entry("sum_partial").buffer("x", DType.F32, Access.READ)
                    .buffer("partial", DType.F32, Access.WRITE).scalar("n", DType.I32).scalar("chunk", DType.I32),
            KernelSpec.entry("sum_final").buffer("partial", DType.F32, Access.READ)
                    .buffer("out", DType.F32, Access.WRITE).scalar("parts", DType.I32),
            KernelSpec.entry("matmul").buffer("a", DType.F32, Access.READ).buffer("b", DType.F32, Access.READ)
                    .buffer("c", DType.F32, Access.WRITE).scalar("m", DType.I32).scalar("n", DType.I32)
                    .scalar("k", DType.I32),
            KernelSpec.entry("softmax").buffer("x", DType.F32, Access.READ).buffer("y", DType.F32, Access.WRITE)
                    .scalar("rows", DType.I32).scalar("cols", DType.I32));

    private BenchKernels() {}

    /** The OpenCL C as a user would write it without arrayd: every entry point a plain {@code __kernel}. */
    static String plainOpenCl() {
        return OPENCL_SOURCE.replace("ARRAYD_KERNEL ", "__kernel ");
    }
}
