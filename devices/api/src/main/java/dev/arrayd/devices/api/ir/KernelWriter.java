package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import java.util.List;

/**
 * Writes one kernel in a C-like dialect: its parameters, guards (hoisted per block where the renderer checks
 * them so), statements and expressions, through the hooks of its {@link CLikeRenderer}. A kernel run group by
 * group in phases is written by {@link PhasedKernelWriter}; a kernel with a lane form gets it from
 * {@link LaneKernelWriter} after its own function and predicate.
 */
class KernelWriter {
    final CLikeRenderer r;
    final CheckedKernel k;
    final StringBuilder out;
    /** Accesses whose guards are checked per block (see {@link CLikeRenderer#hoistsGuards()}). */
    final GuardHoisting.Plan hoisted;
    /** The affine form of an expression, null where it has none; made by the first {@link #index} that asks. */
    private java.util.function.Function<Expr, GuardHoisting.Affine> affine;

    KernelWriter(CLikeRenderer r, CheckedKernel k, StringBuilder out) {
        this.r = r;
        this.k = k;
        this.out = out;
        this.hoisted = r.hoisting(k);
    }

    /** Writes {@code k}, in the form its renderer runs it, to {@code out}. */
    static void write(CLikeRenderer r, CheckedKernel k, StringBuilder out) {
        if (r.phasedGroups() && GroupPhases.needed(k)) {
            new PhasedKernelWriter(r, k, out).kernel();
            return;
        }
        KernelWriter w = new KernelWriter(r, k, out);
        w.kernel();
        LaneBlocks.Plan lanes = r.lanes(k, w.hoisted);
        if (lanes != null) {
            new LaneKernelWriter(r, k, out, lanes).kernel();
        }
    }

    private boolean hoisted(Object node) {
        return hoisted.hoisted(node);
    }

    /** How the text being written names variable {@code name}. */
    String var(String name) {
        return "v_" + name;
    }

    /** Whether a let of {@code name} is written as an assignment to storage declared elsewhere ({@link #var}). */
    boolean storedElsewhere(String name) {
        return false;
    }

    /** How the text being written reads a work-item builtin. */
    String builtin(Expr.Builtin.Kind kind, int dim) {
        return r.builtin(kind, dim);
    }

    /**
     * The kernel's function, then its predicate when it has guards checked per block; or, where the kernel checks
     * its own work-group ({@link CLikeRenderer#checksGroupsInKernel()}), the predicate, then the kernel.
     */
    void kernel() {
        if (!hoisted.isEmpty() && r.checksGroupsInKernel()) {
            predicate();
            out.append(r.kernelHead(k));
            params(false);
            out.append(r.groupBox());
            out.append("    if (arrayd_ok_").append(k.name()).append("(arrayd_lo, arrayd_hi");
            for (IrParam p : k.kernel().params()) {
                out.append(", p_").append(p.name());
            }
            out.append(", arrayd_ext)) {\n        const int arrayd_ok = 1;\n");
            block(k.kernel().body(), 2);
            out.append("    } else {\n        const int arrayd_ok = 0;\n");
            block(k.kernel().body(), 2);
            out.append("    }\n}\n");
            return;
        }
        out.append(r.kernelHead(k));
        params(!hoisted.isEmpty());
        block(k.kernel().body(), 1);
        out.append("}\n");
        if (!hoisted.isEmpty()) {
            predicate();
        }
    }

    /** The parameter list, from its opening parenthesis to the body's opening brace. */
    void params(boolean ok) {
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
                .append(r.globalSpace()).append("arrayd_i64 *arrayd_guard").append(r.trailingParams())
                .append(ok ? ", const int arrayd_ok" : "").append(") {\n");
    }

    /** {@code arrayd_ok_<name>}, see {@link HoistedPredicate}. */
    void predicate() {
        new HoistedPredicate(k, hoisted, out, this::expr, this::extent)
                .write(r.leadingParams(), r.globalSpace(), r.predicateLocals());
    }

    void indent(int depth) {
        out.append("    ".repeat(depth));
    }

    void block(List<Stmt> body, int depth) {
        for (Stmt s : body) {
            stmt(s, depth);
        }
    }

    void stmt(Stmt s, int depth) {
        switch (s) {
            case Stmt.Let let when storedElsewhere(let.name()) -> {
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
            // a hoisted condition holds for the whole block when arrayd_ok is 1 (GuardHoisting)
            case Stmt.If branch -> compound("if (" + (hoisted.hoistedCondition(branch) ? "arrayd_ok || " : "")
                    + expr(branch.condition()) + ") {\n", branch.thenBody(), branch.elseBody(), depth, this::block);
            case Stmt.For loop -> compound(forHead(loop), loop.body(), List.of(), depth, this::block);
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

    /** Writes the statements of a block at a depth (each writer its own way: per item, per group, per lane). */
    interface BodyWriter {
        void write(List<Stmt> body, int depth);
    }

    /**
     * {@code opening} (an {@code if} or loop head ending in its brace and newline), {@code body} written by
     * {@code inner}, the closing brace, and an {@code else} with {@code otherwise} when that is not empty.
     */
    void compound(String opening, List<Stmt> body, List<Stmt> otherwise, int depth, BodyWriter inner) {
        indent(depth);
        out.append(opening);
        inner.write(body, depth + 1);
        indent(depth);
        if (otherwise.isEmpty()) {
            out.append("}\n");
            return;
        }
        out.append("} else {\n");
        inner.write(otherwise, depth + 1);
        indent(depth);
        out.append("}\n");
    }

    /** A store-like access: direct when proven, else inside a bounds check that records the miss. */
    private void access(Object node, String array, Expr index, int depth, java.util.function.UnaryOperator<String> body) {
        String base = arrayRef(array);
        indent(depth);
        if (!k.guarded(node)) {
            out.append(body.apply(base + "[" + index(index) + "]")).append(";\n");
            return;
        }
        out.append("{\n");
        indent(depth + 1);
        out.append("const arrayd_i64 arrayd_i = (arrayd_i64)(").append(index(index)).append(");\n");
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

    /**
     * An access's index: {@link CLikeRenderer#gatherIndex} of it where it is not affine (a dialect that writes every
     * index as it is never runs the analysis).
     */
    String index(Expr index) {
        String text = expr(index);
        String gathered = r.gatherIndex(text);
        if (gathered.equals(text)) {
            return text;
        }
        if (affine == null) {
            affine = GuardHoisting.affineForm(k);
        }
        return affine.apply(index) == null ? gathered : text;
    }

    String expr(Expr e) {
        return switch (e) {
            case Expr.Const c -> r.constant(c);
            case Expr.Param p -> "p_" + p.name();
            case Expr.Var v -> var(v.name());
            case Expr.Builtin b -> builtin(b.kind(), b.dim());
            case Expr.Load l -> {
                DType d = k.elementDType(l.array());
                String raw;
                if (k.guarded(l)) {
                    boolean local = k.localArray(l.array()) != null;
                    String space = local ? r.localSpace() : r.globalSpace();
                    raw = "arrayd_ld" + (space.isEmpty() ? "" : "_" + r.spaceTag(space)) + "_"
                            + (d == DType.F16 || d == DType.BF16 ? "u16" : d.wireName()) + "(" + arrayRef(l.array())
                            + ", (arrayd_i64)(" + index(l.index()) + "), " + extent(l.array()) + ", arrayd_guard, "
                            + k.guardId(l.array()) + ")";
                    if (hoisted(l)) {
                        raw = "(arrayd_ok ? " + arrayRef(l.array()) + "[(arrayd_i64)(" + index(l.index()) + ")] : " + raw + ")";
                    }
                } else {
                    raw = arrayRef(l.array()) + "[" + index(l.index()) + "]";
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

    /** A loop's head, {@code for (type v_x = start; v_x < end; v_x += step)}, with its opening brace and a newline. */
    String forHead(Stmt.For loop) {
        String v = "v_" + loop.var();
        String start = expr(loop.start());
        String end = expr(loop.end());
        return "for (" + CLikeRenderer.valueType(k.varType(loop.var())) + ' ' + v + " = " + start + "; " + v + " < " + end
                + "; " + v + " += " + loop.step() + ") {\n";
    }
}
