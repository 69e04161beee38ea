package dev.arrayd.devices.api.ir;

import java.util.List;

/**
 * C for the CPU backend, in its per-work-item convention: each kernel becomes
 * {@code ARRAYD_KERNEL void name(ARRAYD_ITEM, params..., arrayd_ext, arrayd_guard)} and relies on the
 * CPU backend's header ({@code ARRAYD_KERNEL}, {@code ARRAYD_ITEM}, {@code arrayd_global_id(d)}, ...,
 * {@code <stdint.h>}, {@code <math.h>}, {@code <string.h>}). The backend's trampoline loops x innermost,
 * so a kernel whose accesses are proven in bounds inlines into a loop gcc vectorizes.
 */
public final class CRenderer extends CLikeRenderer {

    @Override
    protected String prelude() {
        return """
                typedef int32_t arrayd_i32;
                typedef int64_t arrayd_i64;
                typedef uint8_t arrayd_u8;
                typedef uint16_t arrayd_u16;
                typedef uint32_t arrayd_u32;
                typedef uint64_t arrayd_u64;
                #define ARRAYD_FN static inline
                ARRAYD_FN float arrayd_u32_as_f32(arrayd_u32 u) { float f; memcpy(&f, &u, 4); return f; }
                ARRAYD_FN arrayd_u32 arrayd_f32_as_u32(float f) { arrayd_u32 u; memcpy(&u, &f, 4); return u; }
                ARRAYD_FN double arrayd_u64_as_f64(arrayd_u64 u) { double f; memcpy(&f, &u, 8); return f; }
                /* the first guard to catch an index records it; the rest only skip their access */
                ARRAYD_FN void arrayd_oob(arrayd_i64 *g, arrayd_i64 id, arrayd_i64 i) {
                    arrayd_i64 zero = 0;
                    if (__atomic_compare_exchange_n(&g[0], &zero, id + 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) g[1] = i;
                }
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
        return "ARRAYD_KERNEL void " + k.name();
    }

    @Override
    protected String leadingParams() {
        return "ARRAYD_ITEM";
    }

    @Override
    protected String builtin(Expr.Builtin.Kind kind, int dim) {
        return switch (kind) {
            case GLOBAL_ID -> "arrayd_global_id(" + dim + ")";
            case GLOBAL_SIZE -> "arrayd_global_size(" + dim + ")";
            case LOCAL_ID -> "arrayd_local_id(" + dim + ")";
            case LOCAL_SIZE -> "arrayd_local_size(" + dim + ")";
            case GROUP_ID -> "arrayd_group_id(" + dim + ")";
            case NUM_GROUPS -> "(arrayd_global_size(" + dim + ") / arrayd_local_size(" + dim + "))";
        };
    }

    @Override
    protected String barrier() {
        throw new IllegalStateException("the cpu backend refuses barriers before rendering");
    }

    @Override
    protected String localDecl() {
        return "";
    }

    @Override
    protected String math(String name, IrType t) {
        return t == IrType.F32 ? name + "f" : name;
    }
}
