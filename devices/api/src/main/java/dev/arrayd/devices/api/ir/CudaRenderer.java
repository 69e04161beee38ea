package dev.arrayd.devices.api.ir;

import java.util.List;

/**
 * CUDA C++ for NVRTC (text only until the CUDA backend lands). Each kernel is an
 * {@code extern "C" __global__} function (unmangled names for {@code cuModuleGetFunction}); its
 * arguments are the declared parameters, then {@code arrayd_ext} and {@code arrayd_guard} as device
 * pointers (see {@link CLikeRenderer}). The launch must cover the grid exactly (blocks of the local
 * size, global sizes divisible by it).
 */
public final class CudaRenderer extends CLikeRenderer {

    @Override
    protected String prelude() {
        return """
                typedef int arrayd_i32;
                typedef long long arrayd_i64;
                typedef unsigned char arrayd_u8;
                typedef unsigned short arrayd_u16;
                typedef unsigned int arrayd_u32;
                typedef unsigned long long arrayd_u64;
                #define ARRAYD_FN static __device__ __forceinline__
                ARRAYD_FN float arrayd_u32_as_f32(arrayd_u32 u) { return __uint_as_float(u); }
                ARRAYD_FN arrayd_u32 arrayd_f32_as_u32(float f) { return __float_as_uint(f); }
                ARRAYD_FN double arrayd_u64_as_f64(arrayd_u64 u) { return __longlong_as_double((long long)u); }
                /* the first guard to catch an index records it; the rest only skip their access */
                ARRAYD_FN void arrayd_oob(arrayd_i64 *g, arrayd_i64 id, arrayd_i64 i) {
                    if (atomicCAS((arrayd_u64 *)g, 0ull, (arrayd_u64)(id + 1)) == 0ull) g[1] = i;
                }
                """;
    }

    /**
     * The same results as {@link CLikeRenderer#MIN_MAX_HELPERS}, with the comparison and the choice written in PTX
     * ({@code setp} and {@code selp}): NVRTC folds the plain {@code a < b ? a : b} with a constant {@code +0.0f}
     * second operand into a minimum that ignores the sign of zero ({@code min(-0.0f, +0.0f)} gave {@code -0.0}),
     * and it cannot look into the assembly.
     */
    @Override
    protected String minMaxHelpers() {
        return """
                ARRAYD_FN float arrayd_pick_f32(float a, float b, bool less) { float r; if (less) asm("{ .reg .pred p; setp.lt.f32 p, %1, %2; selp.f32 %0, %1, %2, p; }" : "=f"(r) : "f"(a), "f"(b)); else asm("{ .reg .pred p; setp.gt.f32 p, %1, %2; selp.f32 %0, %1, %2, p; }" : "=f"(r) : "f"(a), "f"(b)); return r; }
                ARRAYD_FN double arrayd_pick_f64(double a, double b, bool less) { double r; if (less) asm("{ .reg .pred p; setp.lt.f64 p, %1, %2; selp.f64 %0, %1, %2, p; }" : "=d"(r) : "d"(a), "d"(b)); else asm("{ .reg .pred p; setp.gt.f64 p, %1, %2; selp.f64 %0, %1, %2, p; }" : "=d"(r) : "d"(a), "d"(b)); return r; }
                ARRAYD_FN float arrayd_fminf(float a, float b) { return a != a ? b : b != b ? a : arrayd_pick_f32(a, b, true); }
                ARRAYD_FN float arrayd_fmaxf(float a, float b) { return a != a ? b : b != b ? a : arrayd_pick_f32(a, b, false); }
                ARRAYD_FN double arrayd_fmin(double a, double b) { return a != a ? b : b != b ? a : arrayd_pick_f64(a, b, true); }
                ARRAYD_FN double arrayd_fmax(double a, double b) { return a != a ? b : b != b ? a : arrayd_pick_f64(a, b, false); }
                """;
    }

    @Override
    protected List<String> addressSpaces() {
        return List.of("");
    }

    @Override
    protected String globalSpace() {
        return "";
    }

    @Override
    protected String localSpace() {
        return "";
    }

    @Override
    protected String kernelHead(CheckedKernel k) {
        return "extern \"C\" __global__ void " + k.name();
    }

    @Override
    protected String builtin(Expr.Builtin.Kind kind, int dim) {
        String c = switch (dim) {
            case 0 -> "x";
            case 1 -> "y";
            default -> "z";
        };
        return switch (kind) {
            case GLOBAL_ID -> "((arrayd_i64)blockIdx." + c + " * blockDim." + c + " + threadIdx." + c + ")";
            case GLOBAL_SIZE -> "((arrayd_i64)gridDim." + c + " * blockDim." + c + ")";
            case LOCAL_ID -> "((arrayd_i64)threadIdx." + c + ")";
            case LOCAL_SIZE -> "((arrayd_i64)blockDim." + c + ")";
            case GROUP_ID -> "((arrayd_i64)blockIdx." + c + ")";
            case NUM_GROUPS -> "((arrayd_i64)gridDim." + c + ")";
        };
    }

    @Override
    protected String barrier() {
        return "__syncthreads();";
    }

    @Override
    protected String localDecl() {
        return "__shared__ ";
    }

    @Override
    protected String math(String name, IrType t) {
        return t == IrType.F32 ? name + "f" : name;
    }
}
