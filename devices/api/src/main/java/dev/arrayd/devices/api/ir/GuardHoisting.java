package dev.arrayd.devices.api.ir;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which guarded accesses of a kernel (to buffers and local arrays) can be checked once per block of work-items
 * instead of once per access: those whose index is an affine function of the global ids, of the local ids of a
 * kernel that declares its local size (each over {@code [0, size - 1]}, whatever the global id: a wider box
 * than the items have, so the check stays sound) and of loop variables, with coefficients that do not change
 * within a launch (constants, scalar parameters, global and local sizes).
 * Over a box of work-items, and loop variables ranging over their loop's bounds, such an index takes its
 * least and greatest values at the box's corners, so one check of those two values per access covers
 * every work-item of the box. The CPU backend's trampoline asks {@code arrayd_ok_<kernel>} for each block
 * it runs: when every hoisted access is in bounds it runs a copy of the kernel with those guards gone
 * (gcc then vectorizes it like a kernel whose accesses were proven), otherwise the guarded one, so an
 * out-of-bounds access is still caught by its own guard, before it touches memory.
 *
 * <p>Exactness: the predicate evaluates each coefficient exactly as the kernel does (the same rendered
 * expression) and combines them with overflow-checked 64-bit arithmetic, failing on any overflow; a
 * kernel's own index arithmetic wraps (gcc's {@code -fwrapv}), so an index whose true value lies in bounds
 * is computed exactly. Indexes that use anything else — loaded values, mutable variables, products of two
 * varying terms, divisions of varying terms, 32-bit arithmetic on varying terms — keep their guards.
 *
 * <p>Conditions of {@code if} statements are hoisted the same way when they are comparisons ({@code <}, {@code <=},
 * {@code >}, {@code >=}, joined by {@code &&}) of such affine expressions, at least one varying: the predicate
 * bounds each side over the box (exactly, as above, so the kernel computes each side's true value) and requires
 * the greatest left value below the least right one, so the condition holds for every work-item of the box and
 * the fast copy skips it ({@code if (arrayd_ok || cond)}). This is the bounds test of an elementwise kernel,
 * {@code if (i < n)}: only the block at the end of the range, where it fails, runs the copy that tests it per
 * work-item; the others run a loop gcc vectorizes without masks.
 */
public final class GuardHoisting {

    /** Longest sum of terms kept for one index (beyond it the access keeps its guard). */
    static final int MAX_TERMS = 64;

    /** {@code scale} times the product of {@code factors}: expressions of the kernel that are the same for every work-item. */
    record Term(long scale, List<Expr> factors) {}

    /**
     * An affine index: {@code constant + sum over dims of coefficient(dim) * dim}; a dim is {@code "#g0".."#g2"}
     * (a global id), {@code "#l0".."#l2"} (a local id of a declared local size) or the name of a loop variable.
     */
    record Affine(List<Term> constant, Map<String, List<Term>> coefficients) {

        boolean invariant() {
            return coefficients.isEmpty();
        }

        int terms() {
            return constant.size() + coefficients.values().stream().mapToInt(List::size).sum();
        }
    }

    /** A loop variable used as a dim: it ranges over {@code [start, end - 1]} (an empty loop runs no access). */
    record LoopRange(String var, Expr start, Expr end) {}

    /**
     * What a kernel's predicate checks: each hoisted access in the kernel's order (the rendered text is a pure
     * function of the kernel), the same by node for lookup, and the loops whose variables they use.
     */
    public record Plan(List<Access> accesses, Map<Object, Access> byNode, List<LoopRange> loops,
            List<Condition> conditions, Map<Object, Condition> conditionByNode) {

        static final Plan NONE = new Plan(List.of(), Map.of(), List.of(), List.of(), Map.of());

        public boolean isEmpty() {
            return accesses.isEmpty() && conditions.isEmpty();
        }

        public boolean hoisted(Object node) {
            return byNode.containsKey(node);
        }

        /** Whether the condition of {@code node} (an {@code if}) is checked per box instead of per work-item. */
        public boolean hoistedCondition(Object node) {
            return conditionByNode.containsKey(node);
        }
    }

    /** One hoisted access: a buffer parameter and its affine index. */
    record Access(String array, Affine index) {}

    /** {@code left < right} ({@code strict}) or {@code left <= right}, both affine. */
    record Comparison(Affine left, Affine right, boolean strict) {}

    /** A hoisted condition: the conjunction of its parts. */
    record Condition(List<Comparison> parts) {}

    private final CheckedKernel k;
    private final Map<String, Expr> lets = new LinkedHashMap<>();
    private final Map<String, Stmt.For> loops = new LinkedHashMap<>();
    private final Map<Object, Access> hoisted = new IdentityHashMap<>();
    private final List<Access> ordered = new ArrayList<>();
    private final Map<Object, Condition> conditionByNode = new IdentityHashMap<>();
    private final List<Condition> conditions = new ArrayList<>();

    private GuardHoisting(CheckedKernel k) {
        this.k = k;
    }

    /** The hoisting plan of {@code k} (empty when nothing can be hoisted). */
    public static Plan plan(CheckedKernel k) {
        GuardHoisting h = new GuardHoisting(k);
        h.declarations(k.kernel().body());
        h.statements(k.kernel().body());
        List<LoopRange> used = new ArrayList<>();
        for (Stmt.For f : h.loops.values()) {
            boolean needed = h.ordered.stream().anyMatch(a -> a.index().coefficients().containsKey(f.var()))
                    || h.conditions.stream().flatMap(c -> c.parts().stream())
                            .anyMatch(c -> c.left().coefficients().containsKey(f.var())
                                    || c.right().coefficients().containsKey(f.var()));
            if (needed) {
                used.add(new LoopRange(f.var(), f.start(), f.end()));
            }
        }
        return new Plan(List.copyOf(h.ordered), h.hoisted, used, List.copyOf(h.conditions), h.conditionByNode);
    }

    /**
     * The affine form of {@code k}'s expressions, as the plan reads them ({@code "#g0"} for {@code global_id(0)}):
     * null for an expression that is not affine.
     */
    static java.util.function.Function<Expr, Affine> affineForm(CheckedKernel k) {
        GuardHoisting h = new GuardHoisting(k);
        h.declarations(k.kernel().body());
        return h::affine;
    }

    /**
     * Immutable lets (substituted) and loops with bounds fixed for the launch and a positive step (usable as
     * dims: the variable stays within {@code start .. end - 1}, since the validator refuses a loop whose
     * end leaves no room for its last increment, which could otherwise wrap).
     */
    private void declarations(List<Stmt> body) {
        for (Stmt s : body) {
            switch (s) {
                case Stmt.Let l -> {
                    if (!l.mutable() && !k.isMutable(l.name())) {
                        lets.put(l.name(), l.value());
                    }
                }
                case Stmt.If i -> {
                    declarations(i.thenBody());
                    declarations(i.elseBody());
                }
                case Stmt.For f -> {
                    if (f.step() > 0 && !k.isMutable(f.var()) && invariant(f.start()) && invariant(f.end())) {
                        loops.put(f.var(), f);
                    }
                    declarations(f.body());
                }
                default -> { }
            }
        }
    }

    private void statements(List<Stmt> body) {
        for (Stmt s : body) {
            switch (s) {
                case Stmt.Let l -> expressions(l.value());
                case Stmt.Assign a -> expressions(a.value());
                case Stmt.Store st -> {
                    consider(st, st.array(), st.index());
                    expressions(st.index());
                    expressions(st.value());
                }
                case Stmt.Accumulate acc -> {
                    if (acc.index() != null) {
                        consider(acc, acc.target(), acc.index());
                        expressions(acc.index());
                    }
                    expressions(acc.value());
                }
                case Stmt.If i -> {
                    considerCondition(i);
                    expressions(i.condition());
                    statements(i.thenBody());
                    statements(i.elseBody());
                }
                case Stmt.For f -> {
                    expressions(f.start());
                    expressions(f.end());
                    statements(f.body());
                }
                case Stmt.LocalArray la -> { }
                case Stmt.Barrier b -> { }
            }
        }
    }

    private void expressions(Expr e) {
        switch (e) {
            case Expr.Load l -> {
                consider(l, l.array(), l.index());
                expressions(l.index());
            }
            case Expr.Unary u -> expressions(u.operand());
            case Expr.Binary b -> {
                expressions(b.left());
                expressions(b.right());
            }
            case Expr.Select x -> {
                expressions(x.condition());
                expressions(x.ifTrue());
                expressions(x.ifFalse());
            }
            case Expr.Cast c -> expressions(c.operand());
            case Expr.Fma f -> {
                expressions(f.a());
                expressions(f.b());
                expressions(f.c());
            }
            default -> { }
        }
    }

    private void consider(Object node, String array, Expr index) {
        if (!k.guarded(node)) {
            return;
        }
        Affine a = affine(index);
        if (a != null && !a.invariant() && a.terms() <= MAX_TERMS) {
            Access access = new Access(array, a);
            hoisted.put(node, access);
            ordered.add(access);
        }
    }

    private void considerCondition(Stmt.If i) {
        List<Comparison> parts = new ArrayList<>();
        if (!comparisons(i.condition(), parts)) {
            return;
        }
        int terms = 0;
        boolean varying = false;
        for (Comparison c : parts) {
            terms += c.left().terms() + c.right().terms();
            varying |= !c.left().invariant() || !c.right().invariant();
            if (localDims(c.left()) || localDims(c.right())) {
                // a condition on the local id holds for some items of every group and fails for others: checked
                // per block, it would send every block to the guarded copy
                return;
            }
        }
        if (varying && terms <= MAX_TERMS) {
            Condition c = new Condition(List.copyOf(parts));
            conditionByNode.put(i, c);
            conditions.add(c);
        }
    }

    private static boolean localDims(Affine a) {
        return a.coefficients().keySet().stream().anyMatch(d -> d.startsWith("#l"));
    }

    /** Adds the comparisons {@code e} is the conjunction of; false when it is anything else. */
    private boolean comparisons(Expr e, List<Comparison> out) {
        if (!(e instanceof Expr.Binary b)) {
            return false;
        }
        if (b.op() == Expr.Binary.Op.LOGICAL_AND) {
            return comparisons(b.left(), out) && comparisons(b.right(), out);
        }
        Affine l = affine(b.left());
        Affine r = l == null ? null : affine(b.right());
        if (r == null) {
            return false;
        }
        switch (b.op()) {
            case LT -> out.add(new Comparison(l, r, true));
            case LE -> out.add(new Comparison(l, r, false));
            case GT -> out.add(new Comparison(r, l, true));
            case GE -> out.add(new Comparison(r, l, false));
            default -> {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code e} has the same value for every work-item of a launch, and costs nothing to evaluate twice. */
    private boolean invariant(Expr e) {
        return switch (e) {
            case Expr.Const c -> true;
            case Expr.Param p -> true;
            case Expr.Builtin b -> b.kind() == Expr.Builtin.Kind.GLOBAL_SIZE || b.kind() == Expr.Builtin.Kind.LOCAL_SIZE;
            case Expr.Unary u -> invariant(u.operand());
            case Expr.Binary b -> invariant(b.left()) && invariant(b.right());
            case Expr.Cast c -> invariant(c.operand());
            case Expr.Select x -> invariant(x.condition()) && invariant(x.ifTrue()) && invariant(x.ifFalse());
            case Expr.Fma f -> invariant(f.a()) && invariant(f.b()) && invariant(f.c());
            case Expr.Var v -> false;
            case Expr.Load l -> false;
        };
    }

    private static boolean integer(IrType t) {
        return t == IrType.I32 || t == IrType.I64 || t == IrType.U8;
    }

    /** The affine form of {@code e}, or null. */
    Affine affine(Expr e) {
        IrType type = k.type(e);
        if (!integer(type)) {
            return null;
        }
        if (invariant(e)) {
            return new Affine(List.of(new Term(1, List.of(e))), Map.of());
        }
        switch (e) {
            case Expr.Var v -> {
                Stmt.For loop = loops.get(v.name());
                if (loop != null) {
                    return type == IrType.I64 || type == IrType.I32 ? dim(v.name()) : null;
                }
                Expr value = lets.get(v.name());
                return value == null ? null : affine(value);
            }
            case Expr.Builtin b -> {
                if (b.kind() == Expr.Builtin.Kind.GLOBAL_ID) {
                    return dim("#g" + b.dim());
                }
                // a local id of a kernel that declares its local size: a dim over [0, size - 1]
                return b.kind() == Expr.Builtin.Kind.LOCAL_ID && b.dim() < k.kernel().localSize().size()
                        ? dim("#l" + b.dim()) : null;
            }
            case Expr.Cast c -> {
                // a 32-bit loop variable widened: exact, the loop keeps it within its bounds
                if (type == IrType.I64 && c.operand() instanceof Expr.Var v && loops.containsKey(v.name())
                        && k.type(c.operand()) == IrType.I32) {
                    return dim(v.name());
                }
                return null;
            }
            case Expr.Unary u -> {
                if (type != IrType.I64 || u.op() != Expr.Unary.Op.NEG) {
                    return null;
                }
                Affine a = affine(u.operand());
                return a == null ? null : scale(a, -1);
            }
            case Expr.Binary b -> {
                if (type != IrType.I64) {
                    return null;
                }
                Affine l = affine(b.left());
                Affine r = affine(b.right());
                if (l == null || r == null) {
                    return null;
                }
                return switch (b.op()) {
                    case ADD -> sum(l, r);
                    case SUB -> sum(l, scale(r, -1));
                    case MUL -> l.invariant() ? product(r, l.constant()) : r.invariant() ? product(l, r.constant()) : null;
                    default -> null;
                };
            }
            default -> {
                return null;
            }
        }
    }

    private static Affine dim(String name) {
        return new Affine(List.of(), Map.of(name, List.of(new Term(1, List.of()))));
    }

    private static List<Term> scaled(List<Term> terms, long by) {
        return terms.stream().map(t -> new Term(t.scale() * by, t.factors())).toList();
    }

    private static Affine scale(Affine a, long by) {
        Map<String, List<Term>> c = new LinkedHashMap<>();
        a.coefficients().forEach((d, terms) -> c.put(d, scaled(terms, by)));
        return new Affine(scaled(a.constant(), by), c);
    }

    private static List<Term> concat(List<Term> a, List<Term> b) {
        List<Term> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    private static Affine sum(Affine a, Affine b) {
        Map<String, List<Term>> c = new LinkedHashMap<>(a.coefficients());
        b.coefficients().forEach((d, terms) -> c.merge(d, terms, GuardHoisting::concat));
        return new Affine(concat(a.constant(), b.constant()), c);
    }

    /** {@code a} times an invariant sum of terms. */
    private static Affine product(Affine a, List<Term> by) {
        Map<String, List<Term>> c = new LinkedHashMap<>();
        a.coefficients().forEach((d, terms) -> c.put(d, times(terms, by)));
        return new Affine(times(a.constant(), by), c);
    }

    private static List<Term> times(List<Term> a, List<Term> b) {
        List<Term> out = new ArrayList<>(a.size() * b.size());
        for (Term x : a) {
            for (Term y : b) {
                List<Expr> f = new ArrayList<>(x.factors());
                f.addAll(y.factors());
                out.add(new Term(x.scale() * y.scale(), f));
            }
        }
        return out;
    }
}
