package dev.arrayd.devices.api.ir;

import java.util.List;

/**
 * C for the CPU backend, in its per-work-item convention: each kernel becomes
 * {@code ARRAYD_KERNEL void name(ARRAYD_ITEM, params..., arrayd_ext, arrayd_guard, arrayd_one)} and relies on the
 * CPU backend's header ({@code ARRAYD_KERNEL}, {@code ARRAYD_ITEM}, {@code arrayd_global_id(d)}, ...,
 * {@code <stdint.h>}, {@code <math.h>}, {@code <string.h>}). The backend's trampoline loops x innermost,
 * so a kernel whose accesses are proven in bounds inlines into a loop gcc vectorizes. A kernel with local
 * arrays or barriers becomes one function per work-group instead ({@link GroupPhases}): its trampoline
 * loops over groups and passes {@code arrayd_grp}.
 */
public final class CRenderer extends CLikeRenderer {

    /** What the lane form of a kernel is named: this, then the kernel's name (see {@link LaneBlocks}). */
    public static final String LANE_PREFIX = "arrayd_lanes_";

    private final LaneBlocks.Rule lanes;

    /** Lane forms where they pay ({@link LaneBlocks.Rule#AUTO}). */
    public CRenderer() {
        this(LaneBlocks.Rule.AUTO);
    }

    public CRenderer(LaneBlocks.Rule lanes) {
        this.lanes = java.util.Objects.requireNonNull(lanes, "lanes");
    }

    /** The lane form {@code k} gets from this renderer, or null ({@link LaneBlocks}). */
    public LaneBlocks.Plan lanes(CheckedKernel k) {
        return lanes(k, hoisting(k));
    }

    @Override
    protected LaneBlocks.Plan lanes(CheckedKernel k, GuardHoisting.Plan hoisting) {
        return GroupPhases.needed(k) ? null : LaneBlocks.plan(k, hoisting, lanes);
    }

    @Override
    protected String laneKernelHead(CheckedKernel k) {
        return functionPrefix(k) + "ARRAYD_KERNEL void " + LANE_PREFIX + k.name();
    }

    @Override
    protected String prelude() {
        return """
                typedef int32_t arrayd_i32;
                typedef int64_t arrayd_i64;
                typedef uint8_t arrayd_u8;
                typedef uint16_t arrayd_u16;
                typedef uint32_t arrayd_u32;
                typedef uint64_t arrayd_u64;
                /* always inlined: gcc would not inline a helper into a kernel marked ARRAYD_RELAXED (different options) */
                #define ARRAYD_FN static inline __attribute__((always_inline))
                /* each kernel inlines into its trampoline (and its guarded fallback): arrayd_ok becomes a constant there */
                #undef ARRAYD_KERNEL
                #define ARRAYD_KERNEL static inline __attribute__((always_inline))
                /* a kernel with relaxed floating point, and its trampoline (see CRenderer#RELAXED) */
                #define ARRAYD_RELAXED __attribute__((optimize("associative-math", "no-signed-zeros", "no-trapping-math", "fp-contract=fast")))
                /* a kernel calling the math library, and its trampolines: 256-bit vectors at most (see CRenderer#NARROW) */
                #if defined(__x86_64__)
                #define ARRAYD_NARROW __attribute__((target("prefer-vector-width=256")))
                #else
                #define ARRAYD_NARROW
                #endif
                ARRAYD_FN float arrayd_u32_as_f32(arrayd_u32 u) { float f; memcpy(&f, &u, 4); return f; }
                ARRAYD_FN arrayd_u32 arrayd_f32_as_u32(float f) { arrayd_u32 u; memcpy(&u, &f, 4); return u; }
                ARRAYD_FN double arrayd_u64_as_f64(arrayd_u64 u) { double f; memcpy(&f, &u, 8); return f; }
                /* IEEE negation as a sign flip of the bits (see CRenderer#negate) */
                ARRAYD_FN float arrayd_negf(float x) { return arrayd_u32_as_f32(arrayd_f32_as_u32(x) ^ 0x80000000u); }
                ARRAYD_FN double arrayd_neg(double x) { arrayd_u64 u; memcpy(&u, &x, 8); u ^= (arrayd_u64)1 << 63; memcpy(&x, &u, 8); return x; }
                /* overflow-checked arithmetic of the hoisted guards' predicates: any overflow makes *ov 1 */
                ARRAYD_FN arrayd_i64 arrayd_cadd(arrayd_i64 a, arrayd_i64 b, int *ov) { arrayd_i64 r; if (__builtin_add_overflow(a, b, &r)) *ov = 1; return r; }
                ARRAYD_FN arrayd_i64 arrayd_csub(arrayd_i64 a, arrayd_i64 b, int *ov) { arrayd_i64 r; if (__builtin_sub_overflow(a, b, &r)) *ov = 1; return r; }
                ARRAYD_FN arrayd_i64 arrayd_cmul(arrayd_i64 a, arrayd_i64 b, int *ov) { arrayd_i64 r; if (__builtin_mul_overflow(a, b, &r)) *ov = 1; return r; }
                /* the first guard to catch an index records it; the rest only skip their access (a cold call, not inlined) */
                static inline __attribute__((cold)) void arrayd_oob(arrayd_i64 *g, arrayd_i64 id, arrayd_i64 i) {
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

    /**
     * What a kernel that allows relaxed floating point ({@link IrKernel#relaxedMath()}) is marked with, and its
     * trampoline beside it (the kernel inlines into it, so both need the same options): gcc may reassociate
     * (and so vectorize a loop that accumulates), contract into fused multiply-adds and ignore the sign of zero
     * in them, while NaN and infinity keep their meaning. Strict kernels of the same unit are untouched.
     */
    public static final String RELAXED = "ARRAYD_RELAXED ";

    /**
     * What a kernel that calls the math library ({@code exp}, {@code log}, {@code tanh}, {@code pow}) is marked with,
     * and its trampolines: on x86-64, vectors of 256 bits at most, whatever the unit's {@code -mprefer-vector-width}.
     * Such a kernel's time is mostly in those calls, which gcc's 512-bit vector versions do not make faster here, and
     * where they stay scalar (a strict reduction around them) the core runs them at the lower clock that 512-bit
     * code brings (the row softmax: 14.3-14.8 ms narrow against 17.2-17.4 ms wide, one thread of a 2-vCPU VM).
     */
    public static final String NARROW = "ARRAYD_NARROW ";

    /** What {@code k}'s function and trampolines are marked with: {@link #RELAXED}, {@link #NARROW}, both or neither. */
    public static String functionPrefix(CheckedKernel k) {
        return (k.kernel().relaxedMath() ? RELAXED : "") + (callsMath(k.kernel()) ? NARROW : "");
    }

    /** Whether {@code k} calls a math library function (exp, log, tanh, pow; sqrt, floor and ceil are instructions). */
    static boolean callsMath(IrKernel k) {
        return k.body().stream().anyMatch(CRenderer::callsMath);
    }

    private static boolean callsMath(Stmt s) {
        return switch (s) {
            case Stmt.Let l -> callsMath(l.value());
            case Stmt.Assign a -> callsMath(a.value());
            case Stmt.Store st -> callsMath(st.index()) || callsMath(st.value());
            case Stmt.Accumulate acc -> (acc.index() != null && callsMath(acc.index())) || callsMath(acc.value());
            case Stmt.If i -> callsMath(i.condition()) || i.thenBody().stream().anyMatch(CRenderer::callsMath)
                    || i.elseBody().stream().anyMatch(CRenderer::callsMath);
            case Stmt.For f -> callsMath(f.start()) || callsMath(f.end()) || f.body().stream().anyMatch(CRenderer::callsMath);
            case Stmt.LocalArray la -> false;
            case Stmt.Barrier b -> false;
        };
    }

    private static boolean callsMath(Expr e) {
        return switch (e) {
            case Expr.Unary u -> switch (u.op()) {
                case EXP, LOG, TANH -> true;
                default -> callsMath(u.operand());
            };
            case Expr.Binary b -> b.op() == Expr.Binary.Op.POW || callsMath(b.left()) || callsMath(b.right());
            case Expr.Load l -> callsMath(l.index());
            case Expr.Select x -> callsMath(x.condition()) || callsMath(x.ifTrue()) || callsMath(x.ifFalse());
            case Expr.Cast c -> callsMath(c.operand());
            case Expr.Fma f -> callsMath(f.a()) || callsMath(f.b()) || callsMath(f.c());
            default -> false;
        };
    }

    @Override
    protected String kernelHead(CheckedKernel k) {
        return functionPrefix(k) + "ARRAYD_KERNEL void " + k.name();
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
        throw new IllegalStateException("phased kernels never render a barrier statement");
    }

    @Override
    protected String localDecl() {
        return "";
    }

    /** The CPU has no hardware work-groups: kernels with local arrays or barriers run group by group in phases. */
    @Override
    protected boolean phasedGroups() {
        return true;
    }

    @Override
    protected String phasedItem(long[] l, boolean item) {
        String name = item ? "arrayd_item_i" : "arrayd_item_g";
        String[] gid = new String[3];
        String[] lid = new String[3];
        for (int d = 0; d < 3; d++) {
            String lx = "arrayd_l" + "xyz".charAt(d);
            gid[d] = "arrayd_g" + d + " * " + l[d] + (item ? " + " + lx : "");
            lid[d] = item ? lx : "0";
        }
        return "    const arrayd_item_t " + name + " = {{" + String.join(", ", gid) + "}, {arrayd_gs0, arrayd_gs1, arrayd_gs2}, {"
                + String.join(", ", lid) + "}, {" + l[0] + ", " + l[1] + ", " + l[2] + "}, {arrayd_g0, arrayd_g1, arrayd_g2}};\n"
                + "    const arrayd_item_t *arrayd_item__ = &" + name + ";\n";
    }

    /** The CPU's trampolines check hoistable guards once per block of work-items ({@link GuardHoisting}). */
    @Override
    protected boolean hoistsGuards() {
        return true;
    }

    @Override
    protected String math(String name, IrType t) {
        return t == IrType.F32 ? name + "f" : name;
    }

    /**
     * A boolean becomes an integer as {@code cond ? arrayd_one : 0}, where {@code arrayd_one} is a 1 that gcc cannot
     * see: each kernel function takes it as a parameter, which the trampoline passes through an empty {@code asm}
     * before its loops. GCC 12.2's loop vectorizer miscompiles a gather whose offset is a boolean converted to an
     * integer: it takes the comparison's lane mask (all ones where true) as the offset, so {@code a[(i != 46) & 63]}
     * read {@code a[-1]} (emulated gathers) or another wrong element (AVX2 gathers), also inside a kernel whose
     * accesses the hoisted check had proven in bounds. gcc does not turn a select of a value it does not know into
     * a conversion of the boolean; the select costs one AND per vector.
     */
    @Override
    protected String cast(IrType from, IrType to, String a) {
        if (from == IrType.BOOL && to.isInteger()) {
            return "((" + valueType(to) + ")((" + a + ") ? arrayd_one : 0))";
        }
        return super.cast(from, to, a);
    }

    /**
     * An index that is not affine, times {@code arrayd_one}. The conversion of {@link #cast} covers the booleans a
     * kernel converts; gcc also makes some of its own, and the vectorizer then gathers through the lane mask all the
     * same: it folds {@code (x / x) & 63} (0 or 1) into {@code x != 0}, so {@code a[(x / x) & 63]} read
     * {@code a[-1]}. An offset multiplied by a value gcc does not know is no boolean to it; an affine index is
     * left alone (its loads stay contiguous or strided, no gather), and a gather costs one multiply per element.
     */
    @Override
    protected String gatherIndex(String index) {
        return "((arrayd_i64)(" + index + ") * arrayd_one)";
    }

    /** {@code arrayd_one}: see {@link #cast} and {@link #gatherIndex}. */
    @Override
    protected String trailingParams() {
        return ", const arrayd_i32 arrayd_one";
    }

    /** The predicate is no loop gcc vectorizes: a plain 1 serves there. */
    @Override
    protected String predicateLocals() {
        return "    const arrayd_i32 arrayd_one = 1;\n    (void)arrayd_one;\n";
    }

    /**
     * {@code a + (-b)} with {@code -b} a sign flip of the bits ({@link #negate}), which IEEE 754 defines
     * {@code a - b} to be: GCC 12.2 folds {@code 0.0 - x} into {@code -x} whenever it can tell that {@code x} is
     * not -0 (a converted integer, a {@code fabs}), also at {@code -O0}, and {@code -x} is -0 where
     * {@code 0 - x} is +0 ({@code x = +0}); the zero need not be written as one, any operand gcc folds to +0 will
     * do (a comparison's result converted to a float). It costs one XOR per vector.
     */
    @Override
    protected String subtract(IrType t, String a, String b) {
        return "(" + a + " + " + negate(t, b) + ")";
    }

    /**
     * A sign flip of the bits, not C's unary minus: GCC 12 folds {@code -fmaf(a, b, c)} into one fused negative
     * multiply-subtract, {@code -(a * b) - c}, which is +0 where {@code -(a * b + c)} is -0 (a * b = +0, c = -0),
     * vectorized or not; it does not see through the bits.
     */
    @Override
    protected String negate(IrType t, String a) {
        return (t == IrType.F64 ? "arrayd_neg(" : "arrayd_negf(") + a + ")";
    }
}
