package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.Access;
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
            new KernelWriter(k, out).kernel();
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

    /** Writes one kernel. */
    private final class KernelWriter {
        private final CheckedKernel k;
        private final StringBuilder out;
        private final boolean phased;
        /** Per-item variables of a phased kernel (see {@link GroupPhases}); empty otherwise. */
        private final java.util.Set<String> spilled;
        /** In a phased kernel: whether the text being written runs per item (else once per group). */
        private boolean inItem;

        /** Accesses whose guards are checked per block (see {@link #hoistsGuards()}). */
        private final GuardHoisting.Plan hoisted;

        KernelWriter(CheckedKernel k, StringBuilder out) {
            this.k = k;
            this.out = out;
            this.phased = phasedGroups() && GroupPhases.needed(k);
            this.spilled = phased ? GroupPhases.spilled(k) : java.util.Set.of();
            this.hoisted = hoisting(k);
        }

        private boolean hoisted(Object node) {
            return hoisted.hoisted(node);
        }

        private String var(String name) {
            return spilled.contains(name) ? "v_" + name + "[" + (inItem ? "arrayd_li" : "0") + "]" : "v_" + name;
        }

        void kernel() {
            if (phased) {
                phasedKernel();
                return;
            }
            out.append(kernelHead(k)).append('(').append(leadingParams());
            boolean first = leadingParams().isEmpty();
            for (IrParam p : k.kernel().params()) {
                out.append(first ? "" : ", ");
                first = false;
                switch (p) {
                    case IrParam.Buffer b -> out.append(b.access() == Access.READ ? "const " : "").append(globalSpace())
                            .append(storageType(b.dtype())).append(" *p_").append(b.name());
                    case IrParam.Scalar s -> out.append("const ").append(valueType(IrType.ofScalar(s.dtype())))
                            .append(" p_").append(s.name());
                }
            }
            out.append(first ? "" : ", ").append("const ").append(globalSpace()).append("arrayd_i64 *arrayd_ext, ")
                    .append(globalSpace()).append("arrayd_i64 *arrayd_guard").append(hoisted.isEmpty() ? "" : ", const int arrayd_ok")
                    .append(") {\n");
            block(k.kernel().body(), 1);
            out.append("}\n");
            if (!hoisted.isEmpty()) {
                predicate();
            }
        }

        /** {@code arrayd_ok_<name>}, see {@link HoistedPredicate}. */
        private void predicate() {
            new HoistedPredicate(k, hoisted, out, this::expr, this::extent).write(leadingParams());
        }

        private void indent(int depth) {
            out.append("    ".repeat(depth));
        }

        private long[] localSize() {
            long[] l = {1, 1, 1};
            for (int d = 0; d < k.kernel().localSize().size(); d++) {
                l[d] = k.kernel().localSize().get(d);
            }
            return l;
        }

        private void phasedKernel() {
            out.append(kernelHead(k)).append("(const arrayd_i64 *arrayd_grp");
            for (IrParam p : k.kernel().params()) {
                out.append(", ");
                switch (p) {
                    case IrParam.Buffer b -> out.append(b.access() == Access.READ ? "const " : "").append(globalSpace())
                            .append(storageType(b.dtype())).append(" *p_").append(b.name());
                    case IrParam.Scalar s -> out.append("const ").append(valueType(IrType.ofScalar(s.dtype())))
                            .append(" p_").append(s.name());
                }
            }
            out.append(", const ").append(globalSpace()).append("arrayd_i64 *arrayd_ext, ")
                    .append(globalSpace()).append("arrayd_i64 *arrayd_guard").append(hoisted.isEmpty() ? "" : ", const int arrayd_ok")
                    .append(") {\n");
            out.append("    const arrayd_i64 arrayd_g0 = arrayd_grp[0], arrayd_g1 = arrayd_grp[1], arrayd_g2 = arrayd_grp[2];\n");
            out.append("    const arrayd_i64 arrayd_gs0 = arrayd_grp[3], arrayd_gs1 = arrayd_grp[4], arrayd_gs2 = arrayd_grp[5];\n");
            for (Stmt s : k.kernel().body()) {
                if (s instanceof Stmt.LocalArray la) {
                    // the IR leaves local arrays undefined; zeros make runs reproducible and match the interpreter
                    out.append("    ").append(storageType(la.dtype())).append(" l_").append(la.name()).append('[')
                            .append(la.size()).append("];\n    memset(l_").append(la.name()).append(", 0, sizeof l_")
                            .append(la.name()).append(");\n");
                }
            }
            long items = Math.max(1, k.kernel().groupSize());
            for (String v : spilled) {
                out.append("    ").append(valueType(k.varType(v))).append(" v_").append(v).append('[').append(items)
                        .append("];\n");
            }
            long[] l = localSize();
            out.append(phasedItem(l, false));
            inItem = false;
            groupBlock(k.kernel().body(), 1);
            out.append("}\n");
            if (!hoisted.isEmpty()) {
                predicate();
            }
        }

        /** A block at group level: runs of barrier-free statements become item loops. */
        private void groupBlock(List<Stmt> body, int depth) {
            List<Stmt> run = new java.util.ArrayList<>();
            for (Stmt s : body) {
                if (!GroupPhases.containsBarrier(s)) {
                    if (!(s instanceof Stmt.LocalArray)) {
                        run.add(s);
                    }
                    continue;
                }
                itemLoop(run, depth);
                run.clear();
                switch (s) {
                    case Stmt.Barrier b -> {
                        indent(depth);
                        out.append("/* barrier */\n");
                    }
                    case Stmt.If branch -> {
                        indent(depth);
                        out.append("if (").append(expr(branch.condition())).append(") {\n");
                        groupBlock(branch.thenBody(), depth + 1);
                        indent(depth);
                        out.append("} else {\n");
                        groupBlock(branch.elseBody(), depth + 1);
                        indent(depth);
                        out.append("}\n");
                    }
                    case Stmt.For loop -> {
                        indent(depth);
                        String v = "v_" + loop.var();
                        out.append("for (").append(valueType(k.varType(loop.var()))).append(' ').append(v).append(" = ")
                                .append(expr(loop.start())).append("; ").append(v).append(" < ").append(expr(loop.end()))
                                .append("; ").append(v).append(" += ").append(loop.step()).append(") {\n");
                        groupBlock(loop.body(), depth + 1);
                        indent(depth);
                        out.append("}\n");
                    }
                    default -> throw new IllegalStateException("only ifs and loops contain barriers: " + s);
                }
            }
            itemLoop(run, depth);
        }

        /** Runs {@code run} for every item of the group, x innermost. */
        private void itemLoop(List<Stmt> run, int depth) {
            if (run.isEmpty()) {
                return;
            }
            long[] l = localSize();
            indent(depth);
            out.append("for (arrayd_i64 arrayd_lz = 0; arrayd_lz < ").append(l[2]).append("; arrayd_lz++)\n");
            indent(depth);
            out.append("for (arrayd_i64 arrayd_ly = 0; arrayd_ly < ").append(l[1]).append("; arrayd_ly++)\n");
            indent(depth);
            out.append("for (arrayd_i64 arrayd_lx = 0; arrayd_lx < ").append(l[0]).append("; arrayd_lx++) {\n");
            indent(depth + 1);
            out.append("const arrayd_i64 arrayd_li = (arrayd_lz * ").append(l[1]).append(" + arrayd_ly) * ").append(l[0])
                    .append(" + arrayd_lx;\n");
            indent(depth + 1);
            out.append("(void)arrayd_li;\n");
            for (String line : phasedItem(l, true).split("\n")) {
                indent(depth);
                out.append(line).append('\n');
            }
            inItem = true;
            for (Stmt s : run) {
                stmt(s, depth + 1);
            }
            inItem = false;
            indent(depth);
            out.append("}\n");
        }

        private void block(List<Stmt> body, int depth) {
            for (Stmt s : body) {
                stmt(s, depth);
            }
        }

        private void stmt(Stmt s, int depth) {
            switch (s) {
                case Stmt.Let let when spilled.contains(let.name()) -> {
                    indent(depth);
                    out.append(var(let.name())).append(" = ").append(expr(let.value())).append(";\n");
                }
                case Stmt.Let let -> {
                    indent(depth);
                    out.append(let.mutable() ? "" : "const ").append(valueType(k.varType(let.name()))).append(" v_")
                            .append(let.name()).append(" = ").append(expr(let.value())).append(";\n");
                }
                case Stmt.Assign a -> {
                    indent(depth);
                    out.append(var(a.name())).append(" = ").append(expr(a.value())).append(";\n");
                }
                case Stmt.Store st -> access(st, st.array(), st.index(), depth,
                        el -> el + " = " + toStorage(k.elementDType(st.array()), expr(st.value())));
                case Stmt.Accumulate acc -> {
                    Expr.Binary.Op op = switch (acc.op()) {
                        case ADD -> Expr.Binary.Op.ADD;
                        case MAX -> Expr.Binary.Op.MAX;
                        case MIN -> Expr.Binary.Op.MIN;
                    };
                    if (acc.index() == null) {
                        indent(depth);
                        String v = var(acc.target());
                        out.append(v).append(" = ").append(binary(op, k.varType(acc.target()), v, expr(acc.value())))
                                .append(";\n");
                    } else {
                        DType d = k.elementDType(acc.target());
                        access(acc, acc.target(), acc.index(), depth, el -> el + " = " + toStorage(d,
                                binary(op, IrType.ofElement(d), fromStorage(d, el), expr(acc.value()))));
                    }
                }
                case Stmt.If branch -> {
                    indent(depth);
                    // a hoisted condition holds for the whole block when arrayd_ok is 1 (GuardHoisting)
                    out.append("if (").append(hoisted.hoistedCondition(branch) ? "arrayd_ok || " : "")
                            .append(expr(branch.condition())).append(") {\n");
                    block(branch.thenBody(), depth + 1);
                    indent(depth);
                    if (branch.elseBody().isEmpty()) {
                        out.append("}\n");
                    } else {
                        out.append("} else {\n");
                        block(branch.elseBody(), depth + 1);
                        indent(depth);
                        out.append("}\n");
                    }
                }
                case Stmt.For loop -> {
                    indent(depth);
                    String v = "v_" + loop.var();
                    out.append("for (").append(valueType(k.varType(loop.var()))).append(' ').append(v).append(" = ")
                            .append(expr(loop.start())).append("; ").append(v).append(" < ").append(expr(loop.end()))
                            .append("; ").append(v).append(" += ").append(loop.step()).append(") {\n");
                    block(loop.body(), depth + 1);
                    indent(depth);
                    out.append("}\n");
                }
                case Stmt.LocalArray la -> {
                    indent(depth);
                    out.append(localDecl()).append(storageType(la.dtype())).append(" l_").append(la.name())
                            .append('[').append(la.size()).append("];\n");
                }
                case Stmt.Barrier b -> {
                    indent(depth);
                    out.append(barrier()).append('\n');
                }
            }
        }

        /** A store-like access: direct when proven, else inside a bounds check that records the miss. */
        private void access(Object node, String array, Expr index, int depth, java.util.function.UnaryOperator<String> body) {
            String base = arrayRef(array);
            indent(depth);
            if (!k.guarded(node)) {
                out.append(body.apply(base + "[" + expr(index) + "]")).append(";\n");
                return;
            }
            out.append("{\n");
            indent(depth + 1);
            out.append("const arrayd_i64 arrayd_i = (arrayd_i64)(").append(expr(index)).append(");\n");
            indent(depth + 1);
            out.append(hoisted(node) ? "if (arrayd_ok || (arrayd_u64)arrayd_i < (arrayd_u64)" : "if ((arrayd_u64)arrayd_i < (arrayd_u64)")
                    .append(extent(array)).append(") ")
                    .append(body.apply(base + "[arrayd_i]")).append(";\n");
            indent(depth + 1);
            out.append("else arrayd_oob(arrayd_guard, ").append(k.guardId(array)).append(", arrayd_i);\n");
            indent(depth);
            out.append("}\n");
        }

        private String arrayRef(String array) {
            return (k.localArray(array) != null ? "l_" : "p_") + array;
        }

        private String extent(String array) {
            Stmt.LocalArray la = k.localArray(array);
            return la != null ? Long.toString(la.size()) : "arrayd_ext[" + k.paramIndex(array) + "]";
        }

        private String toStorage(DType d, String value) {
            return switch (d) {
                case F16 -> "arrayd_f2h(" + value + ")";
                case BF16 -> "arrayd_f2bf(" + value + ")";
                default -> value;
            };
        }

        private String fromStorage(DType d, String raw) {
            return switch (d) {
                case F16 -> "arrayd_h2f(" + raw + ")";
                case BF16 -> "arrayd_bf2f(" + raw + ")";
                default -> raw;
            };
        }

        String expr(Expr e) {
            return switch (e) {
                case Expr.Const c -> constant(c);
                case Expr.Param p -> "p_" + p.name();
                case Expr.Var v -> var(v.name());
                case Expr.Builtin b -> builtin(b.kind(), b.dim());
                case Expr.Load l -> {
                    DType d = k.elementDType(l.array());
                    String raw;
                    if (k.guarded(l)) {
                        boolean local = k.localArray(l.array()) != null;
                        String space = local ? localSpace() : globalSpace();
                        raw = "arrayd_ld" + (space.isEmpty() ? "" : "_" + spaceTag(space)) + "_"
                                + (d == DType.F16 || d == DType.BF16 ? "u16" : d.wireName()) + "(" + arrayRef(l.array())
                                + ", (arrayd_i64)(" + expr(l.index()) + "), " + extent(l.array()) + ", arrayd_guard, "
                                + k.guardId(l.array()) + ")";
                        if (hoisted(l)) {
                            raw = "(arrayd_ok ? " + arrayRef(l.array()) + "[(arrayd_i64)(" + expr(l.index()) + ")] : " + raw + ")";
                        }
                    } else {
                        raw = arrayRef(l.array()) + "[" + expr(l.index()) + "]";
                    }
                    yield fromStorage(d, raw);
                }
                case Expr.Unary u -> unary(u.op(), k.type(u.operand()), expr(u.operand()));
                case Expr.Binary b -> binary(b.op(), k.type(b.left()), expr(b.left()), expr(b.right()));
                case Expr.Select x -> "(" + expr(x.condition()) + " ? " + expr(x.ifTrue()) + " : " + expr(x.ifFalse()) + ")";
                case Expr.Cast c -> cast(k.type(c.operand()), c.to(), expr(c.operand()));
                case Expr.Fma f -> math("fma", k.type(f)) + "(" + expr(f.a()) + ", " + expr(f.b()) + ", " + expr(f.c()) + ")";
            };
        }
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

    String unary(Expr.Unary.Op op, IrType t, String a) {
        if (t.isFloat()) {
            return switch (op) {
                case NEG -> "(-" + a + ")";
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
                case SUB -> "(" + a + " - " + b + ")";
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

    String cast(IrType from, IrType to, String a) {
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
