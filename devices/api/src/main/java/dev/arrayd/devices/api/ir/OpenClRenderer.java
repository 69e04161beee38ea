package dev.arrayd.devices.api.ir;

import java.util.List;

/**
 * OpenCL C 1.2 (the OpenCL backend's {@code IrProgramAssembler} rewrites each kernel's head). Kernel arguments: the declared parameters,
 * then {@code arrayd_ext} and {@code arrayd_guard} as {@code __global long} buffers (see
 * {@link CLikeRenderer}); the guard's first-wins write needs {@code cl_khr_int64_base_atomics}, and
 * f64 kernels need {@code cl_khr_fp64}.
 */
public final class OpenClRenderer extends CLikeRenderer {

    @Override
    protected String prelude() {
        return """
                #pragma OPENCL EXTENSION cl_khr_fp64 : enable
                #pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
                typedef int arrayd_i32;
                typedef long arrayd_i64;
                typedef uchar arrayd_u8;
                typedef ushort arrayd_u16;
                typedef uint arrayd_u32;
                typedef ulong arrayd_u64;
                #define ARRAYD_FN static inline
                ARRAYD_FN float arrayd_u32_as_f32(arrayd_u32 u) { return as_float(u); }
                ARRAYD_FN arrayd_u32 arrayd_f32_as_u32(float f) { return as_uint(f); }
                ARRAYD_FN double arrayd_u64_as_f64(arrayd_u64 u) { return as_double(u); }
                /* overflow-checked 64-bit arithmetic for the per-group check of hoisted guards */
                ARRAYD_FN arrayd_i64 arrayd_cadd(arrayd_i64 a, arrayd_i64 b, int *ov) { arrayd_i64 r = (arrayd_i64)((arrayd_u64)a + (arrayd_u64)b); if (((a ^ r) & (b ^ r)) < 0) *ov = 1; return r; }
                ARRAYD_FN arrayd_i64 arrayd_csub(arrayd_i64 a, arrayd_i64 b, int *ov) { arrayd_i64 r = (arrayd_i64)((arrayd_u64)a - (arrayd_u64)b); if (((a ^ b) & (a ^ r)) < 0) *ov = 1; return r; }
                ARRAYD_FN arrayd_i64 arrayd_cmul(arrayd_i64 a, arrayd_i64 b, int *ov) { arrayd_i64 r = (arrayd_i64)((arrayd_u64)a * (arrayd_u64)b); if (mul_hi(a, b) != (r >> 63)) *ov = 1; return r; }
                /* the first guard to catch an index records it; the rest only skip their access */
                ARRAYD_FN void arrayd_oob(__global arrayd_i64 *g, arrayd_i64 id, arrayd_i64 i) {
                    if (atom_cmpxchg((volatile __global arrayd_i64 *)g, 0, id + 1) == 0) g[1] = i;
                }
                """;
    }

    /**
     * The same results as {@link CLikeRenderer#MIN_MAX_HELPERS}, written with {@code isnan} and
     * {@code isgreater}/{@code isless}: PoCL's compiler folds the plain comparisons with a constant {@code -0.0f}
     * operand into a maximum that ignores the sign of zero ({@code max(-0.0f, x)} gave {@code -0.0} for
     * {@code x = +0.0}).
     */
    @Override
    protected String minMaxHelpers() {
        return """
                ARRAYD_FN float arrayd_fminf(float a, float b) { return isnan(a) ? b : isless(a, b) || isnan(b) ? a : b; }
                ARRAYD_FN float arrayd_fmaxf(float a, float b) { return isnan(a) ? b : isgreater(a, b) || isnan(b) ? a : b; }
                ARRAYD_FN double arrayd_fmin(double a, double b) { return isnan(a) ? b : isless(a, b) || isnan(b) ? a : b; }
                ARRAYD_FN double arrayd_fmax(double a, double b) { return isnan(a) ? b : isgreater(a, b) || isnan(b) ? a : b; }
                """;
    }

    /**
     * Accesses affine in the ids and loop variables are checked once per work-group by the kernel itself
     * ({@link CLikeRenderer#checksGroupsInKernel()}), so a group whose accesses are all in bounds runs without a
     * test per access (PoCL then vectorizes its work-item loops). Kernels with local arrays keep a guard per
     * access: OpenCL C declares {@code __local} arrays only at the kernel's outermost scope, once, and the
     * checked kernel writes its body twice.
     */
    @Override
    protected boolean hoistsGuards() {
        return true;
    }

    @Override
    public GuardHoisting.Plan hoisting(CheckedKernel k) {
        for (Stmt s : k.kernel().body()) {
            if (s instanceof Stmt.LocalArray) {
                return GuardHoisting.Plan.NONE;
            }
        }
        return super.hoisting(k);
    }

    @Override
    protected boolean checksGroupsInKernel() {
        return true;
    }

    @Override
    protected String groupBox() {
        StringBuilder lo = new StringBuilder("    const arrayd_i64 arrayd_lo[3] = {");
        StringBuilder hi = new StringBuilder("    const arrayd_i64 arrayd_hi[3] = {");
        for (int d = 0; d < 3; d++) {
            String first = "get_group_id(" + d + ") * get_local_size(" + d + ")";
            lo.append(d > 0 ? ", " : "").append("(arrayd_i64)(").append(first).append(")");
            hi.append(d > 0 ? ", " : "").append("(arrayd_i64)min(").append(first).append(" + get_local_size(").append(d)
                    .append("), get_global_size(").append(d).append(")) - 1");
        }
        return lo.append("};\n").toString() + hi.append("};\n");
    }

    @Override
    protected List<String> addressSpaces() {
        return List.of("__global ", "__local ");
    }

    @Override
    protected String globalSpace() {
        return "__global ";
    }

    @Override
    protected String localSpace() {
        return "__local ";
    }

    @Override
    protected String kernelHead(CheckedKernel k) {
        if (!k.kernel().localSize().isEmpty()) {
            List<Long> l = k.kernel().localSize();
            return "__kernel __attribute__((reqd_work_group_size(" + l.get(0) + ", " + (l.size() > 1 ? l.get(1) : 1) + ", "
                    + (l.size() > 2 ? l.get(2) : 1) + "))) void " + k.name();
        }
        return "__kernel void " + k.name();
    }

    @Override
    protected String builtin(Expr.Builtin.Kind kind, int dim) {
        String f = switch (kind) {
            case GLOBAL_ID -> "get_global_id";
            case GLOBAL_SIZE -> "get_global_size";
            case LOCAL_ID -> "get_local_id";
            case LOCAL_SIZE -> "get_local_size";
            case GROUP_ID -> "get_group_id";
            case NUM_GROUPS -> "get_num_groups";
        };
        return "((arrayd_i64)" + f + "(" + dim + "))";
    }

    @Override
    protected String barrier() {
        return "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);";
    }

    @Override
    protected String localDecl() {
        return "__local ";
    }

    @Override
    protected String math(String name, IrType t) {
        return name; // OpenCL C's math functions are overloaded on float and double
    }
}
