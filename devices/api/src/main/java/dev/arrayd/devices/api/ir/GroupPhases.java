package dev.arrayd.devices.api.ir;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * How a backend without hardware work-groups (the CPU) runs a kernel that uses local arrays or
 * barriers: one call per work-group, the body cut at its barriers into <em>phases</em> (loop fission).
 *
 * <pre>
 *   body:  s1; s2; barrier; for (t < T) { s3; barrier; s4; barrier }; s5
 *   runs:  for item { s1; s2 }                       phase (run) 0
 *          for (t < T) {                             group level: t is uniform, evaluated once
 *              for item { s3 }                       run 2
 *              for item { s4 }                       run 3
 *          }
 *          for item { s5 }                           run 4
 * </pre>
 * A statement containing a barrier (an {@code if} or {@code for}, uniform by validation) runs once at
 * group level and its body is cut the same way; every other statement runs inside an item loop. A
 * variable declared in one run and used in another (including a group-level condition or bound) is
 * <em>spilled</em>: stored per item in an array indexed by the item's position in the group. Uniform
 * values read at group level come from item 0, which holds the same value as every other item.
 */
public final class GroupPhases {

    private GroupPhases() {}

    /** Whether {@code k} must run group by group: it has local arrays or barriers. */
    public static boolean needed(CheckedKernel k) {
        return k.usesBarrier() || k.kernel().body().stream().anyMatch(s -> s instanceof Stmt.LocalArray);
    }

    /** Whether {@code s} is or contains a barrier. */
    public static boolean containsBarrier(Stmt s) {
        return switch (s) {
            case Stmt.Barrier b -> true;
            case Stmt.If i -> i.thenBody().stream().anyMatch(GroupPhases::containsBarrier)
                    || i.elseBody().stream().anyMatch(GroupPhases::containsBarrier);
            case Stmt.For f -> f.body().stream().anyMatch(GroupPhases::containsBarrier);
            default -> false;
        };
    }

    /** Variables of {@code k} stored per item because a later phase reads them; in declaration order. */
    public static Set<String> spilled(CheckedKernel k) {
        Planner p = new Planner();
        p.block(k.kernel().body());
        Set<String> out = new LinkedHashSet<>();
        for (var e : p.declaredIn.entrySet()) {
            for (int run = 0; run < p.refs.size(); run++) {
                if (run != e.getValue() && p.refs.get(run).contains(e.getKey())) {
                    out.add(e.getKey());
                }
            }
        }
        return out;
    }

    /** Bytes of per-item storage the spilled variables take for one group. */
    public static long spillBytes(CheckedKernel k) {
        long perItem = 0;
        for (String v : spilled(k)) {
            perItem += Math.max(4, k.varType(v).bits() / 8);
        }
        return perItem * Math.max(1, k.kernel().groupSize());
    }

    /** Bytes of the kernel's local arrays. */
    public static long localBytes(CheckedKernel k) {
        long n = 0;
        for (Stmt s : k.kernel().body()) {
            if (s instanceof Stmt.LocalArray la) {
                n += la.size() * la.dtype().byteSize();
            }
        }
        return n;
    }

    /**
     * Where a run of a phased kernel can stop its loop over {@code local_id(0)} early: the run is some lets and one
     * {@code if (local_id(0) < bound)} without an else (a tree reduction's {@code if (lid < stride) tile[lid] +=
     * tile[lid + stride]}), the lets immutable, kept per item by no other run, without loads, and the bound computed
     * from constants, parameters, group-level values (sizes, group ids, the variables of loops that contain a
     * barrier) and those lets. The items from {@code bound} on then do nothing in the run, and the item loop stops
     * there: it runs the lets at group level first (they hold the same value for every item) and loops
     * {@code local_id(0)} up to {@code bound}.
     *
     * @param lets  the run's lets, evaluated at group level before the loop
     * @param bound the if's right-hand side (i64), evaluated at group level after them
     */
    public record ItemBound(List<Stmt.Let> lets, Expr bound) {}

    /** The early stop of {@code run} in {@code k} ({@link ItemBound}), or null. */
    public static ItemBound itemBound(CheckedKernel k, List<Stmt> run) {
        if (run.isEmpty() || !(run.getLast() instanceof Stmt.If branch) || !branch.elseBody().isEmpty()
                || !(branch.condition() instanceof Expr.Binary cmp) || cmp.op() != Expr.Binary.Op.LT
                || !isLocalId0(k, cmp.left())) {
            return null;
        }
        Set<String> spilled = spilled(k);
        Set<String> groupVars = new java.util.HashSet<>();
        groupLoopVars(k.kernel().body(), groupVars);
        List<Stmt.Let> lets = new ArrayList<>();
        for (Stmt s : run.subList(0, run.size() - 1)) {
            if (!(s instanceof Stmt.Let let) || let.mutable() || k.isMutable(let.name()) || spilled.contains(let.name())
                    || !groupUniform(let.value(), groupVars)) {
                return null;
            }
            lets.add(let);
            groupVars.add(let.name());
        }
        return groupUniform(cmp.right(), groupVars) ? new ItemBound(List.copyOf(lets), cmp.right()) : null;
    }

    private static boolean isLocalId0(CheckedKernel k, Expr e) {
        if (e instanceof Expr.Builtin b) {
            return b.kind() == Expr.Builtin.Kind.LOCAL_ID && b.dim() == 0;
        }
        if (e instanceof Expr.Var v && !k.isMutable(v.name())) {
            Expr value = letValue(k.kernel().body(), v.name());
            return value != null && isLocalId0(k, value);
        }
        return false;
    }

    /** The value of the immutable let {@code name} (names are declared once per kernel), or null. */
    private static Expr letValue(List<Stmt> body, String name) {
        for (Stmt s : body) {
            Expr found = switch (s) {
                case Stmt.Let l -> l.name().equals(name) && !l.mutable() ? l.value() : null;
                case Stmt.If i -> {
                    Expr t = letValue(i.thenBody(), name);
                    yield t != null ? t : letValue(i.elseBody(), name);
                }
                case Stmt.For f -> letValue(f.body(), name);
                default -> null;
            };
            if (found != null) {
                return found;
            }
        }
        return null;
    }

    /** Variables of loops that contain a barrier: they run once per group. */
    private static void groupLoopVars(List<Stmt> body, Set<String> out) {
        for (Stmt s : body) {
            switch (s) {
                case Stmt.For f when containsBarrier(f) -> {
                    out.add(f.var());
                    groupLoopVars(f.body(), out);
                }
                case Stmt.If i when containsBarrier(i) -> {
                    groupLoopVars(i.thenBody(), out);
                    groupLoopVars(i.elseBody(), out);
                }
                default -> { }
            }
        }
    }

    /** Whether {@code e} is the same for every item of a group and can be evaluated at group level. */
    private static boolean groupUniform(Expr e, Set<String> groupVars) {
        return switch (e) {
            case Expr.Const c -> true;
            case Expr.Param p -> true;
            case Expr.Builtin b -> b.kind() != Expr.Builtin.Kind.LOCAL_ID && b.kind() != Expr.Builtin.Kind.GLOBAL_ID;
            case Expr.Var v -> groupVars.contains(v.name());
            case Expr.Load l -> false;
            case Expr.Unary u -> groupUniform(u.operand(), groupVars);
            case Expr.Binary b -> groupUniform(b.left(), groupVars) && groupUniform(b.right(), groupVars);
            case Expr.Select x -> groupUniform(x.condition(), groupVars) && groupUniform(x.ifTrue(), groupVars)
                    && groupUniform(x.ifFalse(), groupVars);
            case Expr.Cast c -> groupUniform(c.operand(), groupVars);
            case Expr.Fma f -> groupUniform(f.a(), groupVars) && groupUniform(f.b(), groupVars) && groupUniform(f.c(), groupVars);
        };
    }

    /** Numbers runs and group-level headers, and records where each group-level let lives and what each run reads. */
    private static final class Planner {
        final Map<String, Integer> declaredIn = new HashMap<>();
        final List<Set<String>> refs = new ArrayList<>();

        void block(List<Stmt> body) {
            int run = -1;
            for (Stmt s : body) {
                if (containsBarrier(s)) {
                    run = -1;
                    switch (s) {
                        case Stmt.If i -> {
                            Set<String> header = newRun();
                            vars(i.condition(), header);
                            block(i.thenBody());
                            block(i.elseBody());
                        }
                        case Stmt.For f -> {
                            Set<String> header = newRun();
                            vars(f.start(), header);
                            vars(f.end(), header);
                            block(f.body());
                        }
                        default -> { }
                    }
                    continue;
                }
                if (run < 0) {
                    newRun();
                    run = refs.size() - 1;
                }
                if (s instanceof Stmt.Let let) {
                    declaredIn.put(let.name(), run);
                }
                vars(s, refs.get(run));
            }
        }

        private Set<String> newRun() {
            Set<String> set = new java.util.HashSet<>();
            refs.add(set);
            return set;
        }
    }

    /** Names of the variables {@code s} reads or writes. */
    static void vars(Stmt s, Set<String> out) {
        switch (s) {
            case Stmt.Let l -> vars(l.value(), out);
            case Stmt.Assign a -> {
                out.add(a.name());
                vars(a.value(), out);
            }
            case Stmt.Store st -> {
                vars(st.index(), out);
                vars(st.value(), out);
            }
            case Stmt.Accumulate acc -> {
                if (acc.index() == null) {
                    out.add(acc.target());
                } else {
                    vars(acc.index(), out);
                }
                vars(acc.value(), out);
            }
            case Stmt.If i -> {
                vars(i.condition(), out);
                i.thenBody().forEach(x -> vars(x, out));
                i.elseBody().forEach(x -> vars(x, out));
            }
            case Stmt.For f -> {
                vars(f.start(), out);
                vars(f.end(), out);
                f.body().forEach(x -> vars(x, out));
            }
            case Stmt.LocalArray la -> { }
            case Stmt.Barrier b -> { }
        }
    }

    static void vars(Expr e, Set<String> out) {
        switch (e) {
            case Expr.Var v -> out.add(v.name());
            case Expr.Load l -> vars(l.index(), out);
            case Expr.Unary u -> vars(u.operand(), out);
            case Expr.Binary b -> {
                vars(b.left(), out);
                vars(b.right(), out);
            }
            case Expr.Select x -> {
                vars(x.condition(), out);
                vars(x.ifTrue(), out);
                vars(x.ifFalse(), out);
            }
            case Expr.Cast c -> vars(c.operand(), out);
            case Expr.Fma f -> {
                vars(f.a(), out);
                vars(f.b(), out);
                vars(f.c(), out);
            }
            case Expr.Const c -> { }
            case Expr.Param p -> { }
            case Expr.Builtin b -> { }
        }
    }
}
