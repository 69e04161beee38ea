package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.DType;

import java.util.List;

/**
 * Renders checked IR kernels as C-family source. The three targets share everything but a few
 * spellings (qualifiers, builtins, math names, bit casts), supplied by {@link CRenderer},
 * {@link OpenClRenderer} and {@link CudaRenderer}.
 *
 * <h2>What the output relies on</h2>
 * <ul>
 *   <li>Every user name gets a prefix ({@code p_} parameters, {@code v_} variables, {@code l_} local
 *       arrays), so no IR name can collide with a C keyword, macro or helper.</li>
 *   <li>Integer arithmetic that may wrap goes through unsigned types; division and casts that trap or
 *       are undefined in C go through the {@code arrayd_*} helpers of the prelude, which compute the
 *       IR's (Java's) results. Float operations map one to one onto IEEE operations: compile without
 *       contraction ({@code -ffp-contract=off}) and without fast-math, or results drift from the
 *       interpreter.</li>
 *   <li>Kernel ABI: the declared parameters in order, then {@code arrayd_ext} (the element count of
 *       each parameter by position; entries of scalars unused) and {@code arrayd_guard} (two 64-bit
 *       words, zero before the launch: the first guard that catches an index writes its guard id + 1
 *       into word 0 and the index into word 1, see {@link CheckedKernel#guardId}).</li>
 * </ul>
 * The output is deterministic (a content-hash compile cache keys on it).
 */
public abstract class CLikeRenderer {

    /** Renders a module: the prelude, then every kernel. */
    public final String render(List<CheckedKernel> kernels) {
        StringBuilder out = new StringBuilder(4096);
        out.append(prelude());
        out.append(minMaxHelpers());
        out.append(COMMON_HELPERS);
        for (String space : addressSpaces()) {
            for (DType d : DType.values()) {
                if (d == DType.BF16) {
                    continue; // same storage as f16
                }
                String t = storageType(d);
                out.append("ARRAYD_FN ").append(t).append(" arrayd_ld").append(space.isEmpty() ? "" : "_" + spaceTag(space))
                        .append('_').append(d == DType.F16 ? "u16" : d.wireName()).append("(const ").append(space)
                        .append(t).append(" *a, arrayd_i64 i, arrayd_i64 n, ").append(globalSpace())
                        .append("arrayd_i64 *g, arrayd_i64 id) {\n")
                        .append("    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];\n")
                        .append("    arrayd_oob(g, id, i);\n    return 0;\n}\n");
            }
        }
        for (CheckedKernel k : kernels) {
            out.append('\n');
            KernelWriter.write(this, k, out);
        }
        return out.toString();
    }

    // ---------------------------------------------------------------- dialect hooks

    /** {@code arrayd_fminf}, {@code arrayd_fmaxf}, {@code arrayd_fmin}, {@code arrayd_fmax}: see {@link #MIN_MAX_HELPERS}. */
    protected String minMaxHelpers() {
        return MIN_MAX_HELPERS;
    }

    /** Type definitions ({@code arrayd_i32}, ... {@code arrayd_u64}), {@code ARRAYD_FN}, bit casts, {@code arrayd_oob}. */
    protected abstract String prelude();

    /** Address space qualifiers for which load helpers are needed ("" for generic pointers). */
    protected abstract List<String> addressSpaces();

    protected String spaceTag(String space) {
        return space.replace("_", "").trim();
    }

    /** Qualifier of buffer pointers ("" in C and CUDA, {@code __global } in OpenCL). */
    protected abstract String globalSpace();

    protected abstract String localSpace();

    /** The kernel's opening line, up to and excluding the parameter list. */
    protected abstract String kernelHead(CheckedKernel k);

    /** Extra leading parameters (C: the work-item). */
    protected String leadingParams() {
        return "";
    }

    /**
     * Extra parameters after {@code arrayd_guard} (and before {@code arrayd_ok}), each with its leading comma (C:
     * {@code arrayd_one}, see {@link CRenderer#cast}); none for targets that launch the kernel directly.
     */
    protected String trailingParams() {
        return "";
    }

    /**
     * What the predicate of hoisted guards declares first ({@link #hoistsGuards()}): the names of
     * {@link #trailingParams()} that expressions it evaluates may use.
     */
    protected String predicateLocals() {
        return "";
    }

    /**
     * How an access writes an index that is not affine in the work-item's ids and the kernel's loop variables (a
     * gather's or a scatter's, when the compiler vectorizes the access): {@code index} as it is by default.
     */
    protected String gatherIndex(String index) {
        return index;
    }

    protected abstract String builtin(Expr.Builtin.Kind kind, int dim);

    protected abstract String barrier();

    /** Declaration keyword of a local array. */
    protected abstract String localDecl();

    protected abstract String math(String name, IrType t);

    /**
     * Whether kernels with local arrays or barriers are rendered as one function per work-group that
     * runs the items in phases ({@link GroupPhases}), for targets without hardware work-groups. Such a
     * kernel takes {@code const arrayd_i64 *arrayd_grp} (group id[3], global size[3]) instead of
     * {@link #leadingParams()}.
     */
    protected boolean phasedGroups() {
        return false;
    }

    /**
     * Whether guards that can be checked once per block of work-items ({@link GuardHoisting}) are: such a
     * kernel takes a last parameter {@code const int arrayd_ok} — when 1, its hoisted accesses skip their guards
     * and its hoisted {@code if} conditions are taken as true — and is followed by its predicate
     * {@code arrayd_ok_<name>(ARRAYD_ITEM, lo, hi, params..., arrayd_ext)}, 1 when every hoisted access is in
     * bounds and every hoisted condition holds for every work-item with global ids in {@code [lo, hi]}
     * (inclusive). The target's caller decides, per block, which to run; for a phased kernel a block is a run of
     * whole work-groups.
     */
    protected boolean hoistsGuards() {
        return false;
    }

    /**
     * Whether hoisted guards ({@link #hoistsGuards()}) are checked by the kernel itself, once per work-group: the
     * predicate {@code arrayd_ok_<name>} comes before the kernel, which computes its group's box of global ids
     * ({@link #groupBox()}), asks the predicate and runs its body with {@code arrayd_ok} 1 or 0 (the body written
     * twice, in the two branches: every item of a group takes the same one, so barriers stay uniform). The
     * kernel then takes no {@code arrayd_ok} parameter. For targets that launch the kernel directly (OpenCL).
     */
    protected boolean checksGroupsInKernel() {
        return false;
    }

    /** Declarations of {@code arrayd_lo[3]} and {@code arrayd_hi[3]}: the global ids of this work-group (see {@link #checksGroupsInKernel()}). */
    protected String groupBox() {
        throw new UnsupportedOperationException("no group check in the kernel for " + getClass().getSimpleName());
    }

    /**
     * The lane form of {@code k} this renderer writes beside it ({@link LaneBlocks}), or null (the default: none). A
     * kernel with one is followed by {@link #laneKernelHead} with the kernel's parameters (no {@code arrayd_ok}),
     * which runs {@link LaneBlocks#WIDTH} work-items from its item's {@code global_id(0)} on, only for blocks whose
     * check by the predicate passed.
     *
     * @param hoisting {@link #hoisting(CheckedKernel)} of {@code k}
     */
    protected LaneBlocks.Plan lanes(CheckedKernel k, GuardHoisting.Plan hoisting) {
        return null;
    }

    /** The lane form's opening line, up to and excluding the parameter list (see {@link #lanes}). */
    protected String laneKernelHead(CheckedKernel k) {
        throw new UnsupportedOperationException("no lane form for " + getClass().getSimpleName());
    }

    /** The hoisting plan this renderer applies to {@code k}: empty unless {@link #hoistsGuards()}. */
    public GuardHoisting.Plan hoisting(CheckedKernel k) {
        if (!hoistsGuards()) {
            return GuardHoisting.Plan.NONE;
        }
        return GuardHoisting.plan(k);
    }

    /**
     * Declarations that make the builtins of {@link #builtin} work inside a phased kernel: for the item
     * at local position {@code arrayd_lx, arrayd_ly, arrayd_lz} when {@code item}, else for the group as
     * a whole (local id 0), given the group ids {@code arrayd_g0..2} and global sizes {@code arrayd_gs0..2}.
     */
    protected String phasedItem(long[] localSize, boolean item) {
        throw new UnsupportedOperationException("no phased groups for " + getClass().getSimpleName());
    }

    // ---------------------------------------------------------------- shared text

    /**
     * {@code min} and {@code max} of floats as the interpreter computes them: a NaN operand yields the other, and
     * of two equal operands (so of {@code -0.0} and {@code +0.0}) the second.
     */
    static final String MIN_MAX_HELPERS = """
            ARRAYD_FN float arrayd_fminf(float a, float b) { return a != a ? b : b != b ? a : a < b ? a : b; }
            ARRAYD_FN float arrayd_fmaxf(float a, float b) { return a != a ? b : b != b ? a : a > b ? a : b; }
            ARRAYD_FN double arrayd_fmin(double a, double b) { return a != a ? b : b != b ? a : a < b ? a : b; }
            ARRAYD_FN double arrayd_fmax(double a, double b) { return a != a ? b : b != b ? a : a > b ? a : b; }
            """;

    static final String COMMON_HELPERS = """
            ARRAYD_FN arrayd_i32 arrayd_div_i32(arrayd_i32 a, arrayd_i32 b) { return b == 0 ? 0 : b == -1 ? (arrayd_i32)(0u - (arrayd_u32)a) : a / b; }
            ARRAYD_FN arrayd_i32 arrayd_rem_i32(arrayd_i32 a, arrayd_i32 b) { return b == 0 || b == -1 ? 0 : a % b; }
            ARRAYD_FN arrayd_i64 arrayd_div_i64(arrayd_i64 a, arrayd_i64 b) { return b == 0 ? 0 : b == -1 ? (arrayd_i64)((arrayd_u64)0 - (arrayd_u64)a) : a / b; }
            ARRAYD_FN arrayd_i64 arrayd_rem_i64(arrayd_i64 a, arrayd_i64 b) { return b == 0 || b == -1 ? 0 : a % b; }
            ARRAYD_FN arrayd_u8 arrayd_div_u8(arrayd_u8 a, arrayd_u8 b) { return b == 0 ? 0 : (arrayd_u8)(a / b); }
            ARRAYD_FN arrayd_u8 arrayd_rem_u8(arrayd_u8 a, arrayd_u8 b) { return b == 0 ? 0 : (arrayd_u8)(a % b); }
            ARRAYD_FN arrayd_i32 arrayd_f2i32(double x) { return x != x ? 0 : x >= 2147483647.0 ? 2147483647 : x <= -2147483648.0 ? (-2147483647 - 1) : (arrayd_i32)x; }
            ARRAYD_FN arrayd_i64 arrayd_f2i64(double x) { return x != x ? 0 : x >= 9223372036854775807.0 ? (arrayd_i64)((~(arrayd_u64)0) >> 1) : x <= -9223372036854775808.0 ? -(arrayd_i64)((~(arrayd_u64)0) >> 1) - 1 : (arrayd_i64)x; }
            ARRAYD_FN arrayd_u8 arrayd_f2u8(double x) { return (arrayd_u8)(arrayd_f2i32(x) & 0xff); }
            ARRAYD_FN float arrayd_h2f(arrayd_u16 h) {
                arrayd_u32 sign = ((arrayd_u32)h & 0x8000u) << 16, e = ((arrayd_u32)h >> 10) & 0x1fu, m = (arrayd_u32)h & 0x3ffu;
                if (e == 0x1fu) return arrayd_u32_as_f32(sign | 0x7f800000u | (m << 13));
                if (e == 0) {
                    if (m == 0) return arrayd_u32_as_f32(sign);
                    arrayd_i32 ee = 1;
                    while ((m & 0x400u) == 0) { m <<= 1; ee--; }
                    return arrayd_u32_as_f32(sign | ((arrayd_u32)(ee + 112) << 23) | ((m & 0x3ffu) << 13));
                }
                return arrayd_u32_as_f32(sign | ((e + 112u) << 23) | (m << 13));
            }
            ARRAYD_FN arrayd_u16 arrayd_f2h(float f) {
                arrayd_u32 x = arrayd_f32_as_u32(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
                if (ax > 0x7f800000u) return (arrayd_u16)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
                if (ax >= 0x477ff000u) return (arrayd_u16)(sign | 0x7c00u);
                if (ax >= 0x38800000u) {
                    arrayd_u32 r = ax - 0x38000000u, h = r >> 13, rem = r & 0x1fffu;
                    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
                    return (arrayd_u16)(sign | h);
                }
                arrayd_u32 e = ax >> 23;
                if (e < 102u) return (arrayd_u16)sign;
                arrayd_u32 m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e, h = m >> shift;
                arrayd_u32 rem = m & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
                if (rem > halfway || (rem == halfway && (h & 1u))) h++;
                return (arrayd_u16)(sign | h);
            }
            ARRAYD_FN float arrayd_bf2f(arrayd_u16 h) { return arrayd_u32_as_f32((arrayd_u32)h << 16); }
            ARRAYD_FN arrayd_u16 arrayd_f2bf(float f) {
                arrayd_u32 x = arrayd_f32_as_u32(f);
                if ((x & 0x7fffffffu) > 0x7f800000u) return (arrayd_u16)((x >> 16) | 0x40u);
                return (arrayd_u16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
            }
            """;

    /**
     * The C type the rendered source stores an element of {@code d} in (the prelude's typedefs; f16 and
     * bf16 as raw 16-bit words). Backends that write their own entry points around rendered kernels use
     * it for buffer and scalar parameters.
     */
    public static String storageType(DType d) {
        return switch (d) {
            case F32 -> "float";
            case F64 -> "double";
            case I32 -> "arrayd_i32";
            case I64 -> "arrayd_i64";
            case U8 -> "arrayd_u8";
            case F16, BF16 -> "arrayd_u16";
        };
    }

    /**
     * {@code rendered} with its one occurrence of {@code head} (a kernel's opening, e.g.
     * {@code "ARRAYD_KERNEL void vadd("}) replaced by {@code replacement}: for backends that rename or wrap
     * rendered kernels. IllegalStateException when there is none or more than one (the renderer changed).
     */
    public static String replaceKernelHead(String rendered, String head, String replacement, String renderer) {
        int at = rendered.indexOf(head);
        if (at < 0 || rendered.indexOf(head, at + 1) >= 0) {
            throw new IllegalStateException("the " + renderer + " renderer's output has " + (at < 0 ? "no" : "more than one")
                    + " kernel head \"" + head + "\" (expected: exactly one per kernel)");
        }
        return rendered.substring(0, at) + replacement + rendered.substring(at + head.length());
    }

    static String valueType(IrType t) {
        return switch (t) {
            case BOOL -> "arrayd_i32";
            case U8 -> "arrayd_u8";
            case I32 -> "arrayd_i32";
            case I64 -> "arrayd_i64";
            case F32 -> "float";
            case F64 -> "double";
        };
    }

    String constant(Expr.Const c) {
        return switch (c.type()) {
            case BOOL -> c.bits() != 0 ? "1" : "0";
            case U8 -> "((arrayd_u8)" + c.bits() + ")";
            case I32 -> c.bits() == Integer.MIN_VALUE ? "(-2147483647 - 1)" : "((arrayd_i32)" + c.bits() + ")";
            case I64 -> c.bits() >= Integer.MIN_VALUE && c.bits() <= Integer.MAX_VALUE && c.bits() != Integer.MIN_VALUE
                    ? "((arrayd_i64)" + c.bits() + ")"
                    : "((arrayd_i64)(((arrayd_u64)" + ((c.bits() >>> 32) & 0xffff_ffffL) + "u << 32) | (arrayd_u64)"
                    + (c.bits() & 0xffff_ffffL) + "u))";
            case F32 -> {
                float f = Float.intBitsToFloat((int) c.bits());
                yield Float.isFinite(f) ? "(" + Float.toHexString(f) + "f)"
                        : "arrayd_u32_as_f32(" + (c.bits() & 0xffff_ffffL) + "u)";
            }
            case F64 -> {
                double f = Double.longBitsToDouble(c.bits());
                yield Double.isFinite(f) ? "(" + Double.toHexString(f) + ")"
                        : "arrayd_u64_as_f64(((arrayd_u64)" + ((c.bits() >>> 32) & 0xffff_ffffL) + "u << 32) | (arrayd_u64)"
                        + (c.bits() & 0xffff_ffffL) + "u)";
            }
        };
    }

    /** IEEE negation of a float value {@code a} of type {@code t} (its sign flipped; NaN and zeros included). */
    protected String negate(IrType t, String a) {
        return "(-" + a + ")";
    }

    /** IEEE subtraction {@code a - b} of float values of type {@code t} (rounded once; {@code +0 - +0} is {@code +0}). */
    protected String subtract(IrType t, String a, String b) {
        return "(" + a + " - " + b + ")";
    }

    String unary(Expr.Unary.Op op, IrType t, String a) {
        if (t.isFloat()) {
            return switch (op) {
                case NEG -> negate(t, a);
                case ABS -> math("fabs", t) + "(" + a + ")";
                case SQRT -> math("sqrt", t) + "(" + a + ")";
                case EXP -> math("exp", t) + "(" + a + ")";
                case LOG -> math("log", t) + "(" + a + ")";
                case TANH -> math("tanh", t) + "(" + a + ")";
                case FLOOR -> math("floor", t) + "(" + a + ")";
                case CEIL -> math("ceil", t) + "(" + a + ")";
                case NOT -> throw new IllegalStateException("validated");
            };
        }
        String vt = valueType(t);
        String ut = unsignedOf(t);
        return switch (op) {
            case NEG -> t == IrType.U8 ? "((arrayd_u8)(0 - " + a + "))" : "((" + vt + ")((" + ut + ")0 - (" + ut + ")" + a + "))";
            case ABS -> t == IrType.U8 ? a : "(" + a + " < 0 ? (" + vt + ")((" + ut + ")0 - (" + ut + ")" + a + ") : " + a + ")";
            case NOT -> t == IrType.BOOL ? "(!" + a + ")" : "((" + vt + ")~" + a + ")";
            default -> throw new IllegalStateException("validated");
        };
    }

    private static String unsignedOf(IrType t) {
        return t == IrType.I64 ? "arrayd_u64" : "arrayd_u32";
    }

    String binary(Expr.Binary.Op op, IrType t, String a, String b) {
        if (t.isFloat()) {
            String f = t == IrType.F32 ? "f" : "";
            return switch (op) {
                case ADD -> "(" + a + " + " + b + ")";
                case SUB -> subtract(t, a, b);
                case MUL -> "(" + a + " * " + b + ")";
                case DIV -> "(" + a + " / " + b + ")";
                case REM -> math("fmod", t) + "(" + a + ", " + b + ")";
                case MIN -> "arrayd_fmin" + f + "(" + a + ", " + b + ")";
                case MAX -> "arrayd_fmax" + f + "(" + a + ", " + b + ")";
                case POW -> math("pow", t) + "(" + a + ", " + b + ")";
                default -> compare(op, a, b);
            };
        }
        String vt = valueType(t);
        String ut = unsignedOf(t);
        int mask = t.bits() - 1;
        return switch (op) {
            case ADD, SUB, MUL -> {
                String sym = op == Expr.Binary.Op.ADD ? " + " : op == Expr.Binary.Op.SUB ? " - " : " * ";
                yield t == IrType.U8 ? "((arrayd_u8)(" + a + sym + b + "))"
                        : "((" + vt + ")((" + ut + ")" + a + sym + "(" + ut + ")" + b + "))";
            }
            case DIV -> "arrayd_div_" + t + "(" + a + ", " + b + ")";
            case REM -> "arrayd_rem_" + t + "(" + a + ", " + b + ")";
            case MIN -> "(" + a + " < " + b + " ? " + a + " : " + b + ")";
            case MAX -> "(" + a + " > " + b + " ? " + a + " : " + b + ")";
            case AND -> "(" + a + " & " + b + ")";
            case OR -> "(" + a + " | " + b + ")";
            case XOR -> "(" + a + " ^ " + b + ")";
            case SHL -> t == IrType.U8 ? "((arrayd_u8)(" + a + " << (" + b + " & 7)))"
                    : "((" + vt + ")((" + ut + ")" + a + " << (" + b + " & " + mask + ")))";
            case SHR -> t == IrType.U8 ? "((arrayd_u8)(" + a + " >> (" + b + " & 7)))"
                    : "(" + a + " >> (" + b + " & " + mask + "))";
            case LOGICAL_AND -> "(" + a + " && " + b + ")";
            case LOGICAL_OR -> "(" + a + " || " + b + ")";
            default -> compare(op, a, b);
        };
    }

    private static String compare(Expr.Binary.Op op, String a, String b) {
        String sym = switch (op) {
            case EQ -> " == ";
            case NE -> " != ";
            case LT -> " < ";
            case LE -> " <= ";
            case GT -> " > ";
            case GE -> " >= ";
            default -> throw new IllegalStateException("validated: " + op);
        };
        return "((arrayd_i32)(" + a + sym + b + "))";
    }

    /** {@code a}, of type {@code from}, converted to {@code to} as the IR converts. */
    protected String cast(IrType from, IrType to, String a) {
        if (from == to) {
            return a;
        }
        if (to == IrType.BOOL) {
            return "((arrayd_i32)(" + a + " != 0))";
        }
        if (from.isFloat() && to.isInteger()) {
            return "arrayd_f2" + to + "(" + a + ")";
        }
        return "((" + valueType(to) + ")" + a + ")";
    }
}
