package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import java.util.List;

/**
 * Writes one kernel in a C-like dialect: its parameters, guards (hoisted per block where the renderer checks
 * them so), statements and expressions, through the hooks of its {@link CLikeRenderer}.
 */
final class KernelWriter {
    private final CLikeRenderer r;
    private final CheckedKernel k;
    private final StringBuilder out;
    private final boolean phased;
    /** Per-item variables of a phased kernel (see {@link GroupPhases}); empty otherwise. */
    private final java.util.Set<String> spilled;
    /** In a phased kernel: whether the text being written runs per item (else once per group). */
    private boolean inItem;

    /** Accesses whose guards are checked per block (see {@link CLikeRenderer#hoistsGuards()}). */
    private final GuardHoisting.Plan hoisted;
    /** The kernel's lane form ({@link LaneBlocks}), or null. */
    private final LaneBlocks.Plan lanes;
    /** In the lane form: whether the text being written runs per lane (else once per block). */
    private boolean inLane;

    KernelWriter(CLikeRenderer r, CheckedKernel k, StringBuilder out) {
        this.r = r;
        this.k = k;
        this.out = out;
        this.phased = r.phasedGroups() && GroupPhases.needed(k);
        this.spilled = phased ? GroupPhases.spilled(k) : java.util.Set.of();
        this.hoisted = r.hoisting(k);
        this.lanes = phased ? null : r.lanes(k, hoisted);
    }

    private boolean hoisted(Object node) {
        return hoisted.hoisted(node);
    }

    private String var(String name) {
        if (inLane && lanes.arrays().contains(name)) {
            return "v_" + name + "[arrayd_l]";
        }
        return spilled.contains(name) ? "v_" + name + "[" + (inItem ? "arrayd_li" : "0") + "]" : "v_" + name;
    }

    void kernel() {
        if (phased) {
            phasedKernel();
            return;
        }
        out.append(r.kernelHead(k));
        params(!hoisted.isEmpty());
        block(k.kernel().body(), 1);
        out.append("}\n");
        if (!hoisted.isEmpty()) {
            predicate();
        }
        if (lanes != null) {
            laneKernel();
        }
    }

    /** The parameter list, from its opening parenthesis to the body's opening brace. */
    private void params(boolean ok) {
        out.append('(').append(r.leadingParams());
        boolean first = r.leadingParams().isEmpty();
        for (IrParam p : k.kernel().params()) {
            out.append(first ? "" : ", ");
            first = false;
            switch (p) {
                case IrParam.Buffer b -> out.append(b.access() == Access.READ ? "const " : "").append(r.globalSpace())
                        .append(CLikeRenderer.storageType(b.dtype())).append(" *p_").append(b.name());
                case IrParam.Scalar s -> out.append("const ").append(CLikeRenderer.valueType(IrType.ofScalar(s.dtype())))
                        .append(" p_").append(s.name());
            }
        }
        out.append(first ? "" : ", ").append("const ").append(r.globalSpace()).append("arrayd_i64 *arrayd_ext, ")
                .append(r.globalSpace()).append("arrayd_i64 *arrayd_guard").append(ok ? ", const int arrayd_ok" : "")
                .append(") {\n");
    }

    /**
     * The lane form ({@link LaneBlocks}): {@link LaneBlocks#WIDTH} work-items from the item's {@code global_id(0)} on,
     * run only where the block check passed (so {@code arrayd_ok} is 1 in it).
     */
    private void laneKernel() {
        out.append(r.laneKernelHead(k));
        params(false);
        out.append("    const int arrayd_ok = 1;\n    (void)arrayd_ok;\n");
        laneBlock(k.kernel().body(), 1);
        out.append("}\n");
    }

    /** A block run once per block of lanes: runs of per-lane statements become lane loops. */
    private void laneBlock(List<Stmt> body, int depth) {
        List<Stmt> run = new java.util.ArrayList<>();
        for (Stmt s : body) {
            if (lanes.inLane(s)) {
                run.add(s);
                continue;
            }
            laneLoop(run, depth);
            run.clear();
            switch (s) {
                case Stmt.If branch when hoisted.hoistedCondition(branch) -> {
                    // holds for every item of a block that passed the check
                    indent(depth);
                    out.append("{\n");
                    laneBlock(branch.thenBody(), depth + 1);
                    indent(depth);
                    out.append("}\n");
                }
                case Stmt.If branch -> {
                    indent(depth);
                    out.append("if (").append(expr(branch.condition())).append(") {\n");
                    laneBlock(branch.thenBody(), depth + 1);
                    indent(depth);
                    out.append("} else {\n");
                    laneBlock(branch.elseBody(), depth + 1);
                    indent(depth);
                    out.append("}\n");
                }
                case Stmt.For loop -> {
                    indent(depth);
                    out.append(forHead(loop));
                    laneBlock(loop.body(), depth + 1);
                    indent(depth);
                    out.append("}\n");
                }
                default -> stmt(s, depth);
            }
        }
        laneLoop(run, depth);
    }

    /** Runs {@code run} once per lane, in a loop gcc may vectorize (lanes are work-items: no dependence between them). */
    private void laneLoop(List<Stmt> run, int depth) {
        if (run.isEmpty()) {
            return;
        }
        for (Stmt s : run) {
            if (s instanceof Stmt.Let let && lanes.arrays().contains(let.name())) {
                indent(depth);
                out.append(CLikeRenderer.valueType(k.varType(let.name()))).append(" v_").append(let.name()).append('[')
                        .append(LaneBlocks.WIDTH).append("];\n");
            }
        }
        indent(depth);
        out.append("#pragma GCC ivdep\n");
        indent(depth);
        out.append("for (int arrayd_l = 0; arrayd_l < ").append(LaneBlocks.WIDTH).append("; arrayd_l++) {\n");
        inLane = true;
        for (Stmt s : run) {
            stmt(s, depth + 1);
        }
        inLane = false;
        indent(depth);
        out.append("}\n");
    }

    /** {@code arrayd_ok_<name>}, see {@link HoistedPredicate}. */
    private void predicate() {
        new HoistedPredicate(k, hoisted, out, this::expr, this::extent).write(r.leadingParams());
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
        out.append(r.kernelHead(k)).append("(const arrayd_i64 *arrayd_grp");
        for (IrParam p : k.kernel().params()) {
            out.append(", ");
            switch (p) {
                case IrParam.Buffer b -> out.append(b.access() == Access.READ ? "const " : "").append(r.globalSpace())
                        .append(CLikeRenderer.storageType(b.dtype())).append(" *p_").append(b.name());
                case IrParam.Scalar s -> out.append("const ").append(CLikeRenderer.valueType(IrType.ofScalar(s.dtype())))
                        .append(" p_").append(s.name());
            }
        }
        out.append(", const ").append(r.globalSpace()).append("arrayd_i64 *arrayd_ext, ")
                .append(r.globalSpace()).append("arrayd_i64 *arrayd_guard").append(hoisted.isEmpty() ? "" : ", const int arrayd_ok")
                .append(") {\n");
        out.append("    const arrayd_i64 arrayd_g0 = arrayd_grp[0], arrayd_g1 = arrayd_grp[1], arrayd_g2 = arrayd_grp[2];\n");
        out.append("    const arrayd_i64 arrayd_gs0 = arrayd_grp[3], arrayd_gs1 = arrayd_grp[4], arrayd_gs2 = arrayd_grp[5];\n");
        for (Stmt s : k.kernel().body()) {
            if (s instanceof Stmt.LocalArray la) {
                // the IR leaves local arrays undefined; zeros make runs reproducible and match the interpreter
                out.append("    ").append(CLikeRenderer.storageType(la.dtype())).append(" l_").append(la.name()).append('[')
                        .append(la.size()).append("];\n    memset(l_").append(la.name()).append(", 0, sizeof l_")
                        .append(la.name()).append(");\n");
            }
        }
        long items = Math.max(1, k.kernel().groupSize());
        for (String v : spilled) {
            out.append("    ").append(CLikeRenderer.valueType(k.varType(v))).append(" v_").append(v).append('[').append(items)
                    .append("];\n");
        }
        long[] l = localSize();
        out.append(r.phasedItem(l, false));
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
                    out.append(forHead(loop));
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
        for (String line : r.phasedItem(l, true).split("\n")) {
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
            case Stmt.Let let when spilled.contains(let.name()) || (inLane && lanes.arrays().contains(let.name())) -> {
                indent(depth);
                out.append(var(let.name())).append(" = ").append(expr(let.value())).append(";\n");
            }
            case Stmt.Let let -> {
                indent(depth);
                out.append(let.mutable() ? "" : "const ").append(CLikeRenderer.valueType(k.varType(let.name()))).append(" v_")
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
                    out.append(v).append(" = ").append(r.binary(op, k.varType(acc.target()), v, expr(acc.value())))
                            .append(";\n");
                } else {
                    DType d = k.elementDType(acc.target());
                    access(acc, acc.target(), acc.index(), depth, el -> el + " = " + toStorage(d,
                            r.binary(op, IrType.ofElement(d), fromStorage(d, el), expr(acc.value()))));
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
                out.append(forHead(loop));
                block(loop.body(), depth + 1);
                indent(depth);
                out.append("}\n");
            }
            case Stmt.LocalArray la -> {
                indent(depth);
                out.append(r.localDecl()).append(CLikeRenderer.storageType(la.dtype())).append(" l_").append(la.name())
                        .append('[').append(la.size()).append("];\n");
            }
            case Stmt.Barrier b -> {
                indent(depth);
                out.append(r.barrier()).append('\n');
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
            case Expr.Const c -> r.constant(c);
            case Expr.Param p -> "p_" + p.name();
            case Expr.Var v -> var(v.name());
            case Expr.Builtin b -> inLane && b.dim() == 0 ? laneBuiltin(b.kind()) : r.builtin(b.kind(), b.dim());
            case Expr.Load l -> {
                DType d = k.elementDType(l.array());
                String raw;
                if (k.guarded(l)) {
                    boolean local = k.localArray(l.array()) != null;
                    String space = local ? r.localSpace() : r.globalSpace();
                    raw = "arrayd_ld" + (space.isEmpty() ? "" : "_" + r.spaceTag(space)) + "_"
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
            case Expr.Unary u -> r.unary(u.op(), k.type(u.operand()), expr(u.operand()));
            case Expr.Binary b -> r.binary(b.op(), k.type(b.left()), expr(b.left()), expr(b.right()));
            case Expr.Select x -> "(" + expr(x.condition()) + " ? " + expr(x.ifTrue()) + " : " + expr(x.ifFalse()) + ")";
            case Expr.Cast c -> r.cast(k.type(c.operand()), c.to(), expr(c.operand()));
            case Expr.Fma f -> r.math("fma", k.type(f)) + "(" + expr(f.a()) + ", " + expr(f.b()) + ", " + expr(f.c()) + ")";
        };
    }

    /** A builtin of dimension 0 for lane {@code arrayd_l} of a block starting at the item's {@code global_id(0)}. */
    private String laneBuiltin(Expr.Builtin.Kind kind) {
        String x = "(" + r.builtin(Expr.Builtin.Kind.GLOBAL_ID, 0) + " + arrayd_l)";
        String l = r.builtin(Expr.Builtin.Kind.LOCAL_SIZE, 0);
        return switch (kind) {
            case GLOBAL_ID -> x;
            case LOCAL_ID -> "(" + x + " % " + l + ")";
            case GROUP_ID -> "(" + x + " / " + l + ")";
            default -> r.builtin(kind, 0);
        };
    }

    /** A loop's head, {@code for (type v_x = start; v_x < end; v_x += step)}, with its opening brace and a newline. */
    private String forHead(Stmt.For loop) {
        String v = "v_" + loop.var();
        String start = expr(loop.start());
        String end = expr(loop.end());
        return "for (" + CLikeRenderer.valueType(k.varType(loop.var())) + ' ' + v + " = " + start + "; " + v + " < " + end
                + "; " + v + " += " + loop.step() + ") {\n";
    }
}
