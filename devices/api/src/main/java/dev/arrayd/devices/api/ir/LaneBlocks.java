package dev.arrayd.devices.api.ir;

import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * How the CPU runs {@link #WIDTH} consecutive work-items of a kernel as the lanes of vectors (PoCL's
 * work-item loops, for a target whose compiler vectorizes one loop at a time): one call runs a block of
 * items along dimension 0, statements that are the same for every item of the block (<em>uniform</em>)
 * run once, and every other statement runs in a loop over the lanes, which gcc vectorizes.
 *
 * <pre>
 *   body:  let col = global_id(0); let acc = 0 (mutable)      for lane { acc[l] = 0 }
 *          for (kk &lt; k) { acc += a[row*k+kk] * b[kk*n+col] }    for (kk &lt; k) { for lane { acc[l] += ... b[kk*n+x0+l] } }
 *          c[row*n+col] = acc                                  for lane { c[row*n+x0+l] = acc[l] }
 * </pre>
 * A kernel that loops inside each work-item (a dot product, a stencil, a naive matmul) gets its item loop
 * inside its own loops this way, where gcc vectorizes across items what it could not vectorize within one
 * (a strict sum cannot be reordered; the items' sums are independent).
 *
 * <p>What varies across the lanes: {@code global_id(0)}, {@code local_id(0)}, {@code group_id(0)}, a load at a
 * varying index, and every variable given a varying value or assigned under varying control. An {@code if}
 * with a varying condition and a {@code for} with varying bounds run whole inside the lane loop; stores
 * always do. A variable declared at block level that varies is kept per lane, in an array of {@link #WIDTH}
 * (or a field of each lane's struct, {@link Plan#laneMajor()}), unless it is derived from the ids alone
 * ({@link Plan#derived()}, written out where it is read) or used only by the lane loop that declares it (a
 * plain local of that loop).
 *
 * <p>Accesses at a constant stride across lanes (a work-item computing a block of 8 consecutive columns reads
 * {@code b} at {@code 8 * global_id(0) + j}) make the form lane-major: one struct per lane, so that gcc
 * vectorizes each lane's own consecutive fields and loads where, variable by variable, it would have to shuffle
 * every strided load into its lane.
 *
 * <p>The lane form changes the order in which the statements of different work-items run, which the IR
 * leaves unspecified (work-items may run in any order and interleaved; a kernel whose result depends on it
 * has a data race). It is used only in the block fast path: every guarded access of the kernel is checked per
 * block ({@link GuardHoisting}), so it runs only where that check passed ({@code arrayd_ok} is 1) and no
 * guard is left inside it. Phased kernels (local arrays, barriers) are never run so.
 */
public final class LaneBlocks {

    /** Work-items per block: 16 lanes of f32 fill a 512-bit vector. */
    public static final int WIDTH = 16;

    /** Most variables kept per lane: past it, the lanes' arrays would not stay in registers. */
    static final int MAX_ARRAYS = 32;

    /** Largest stride across lanes (elements) an access in a uniform loop may have for {@link Rule#AUTO}. */
    static final int MAX_STRIDE = 16;

    /**
     * Fewest mutable variables kept per lane (the state each lane carries around its loops) for which
     * {@link Rule#AUTO} runs a kernel with strided accesses lane-major. Measured with gcc 12 on AVX2: with a 2 x 8
     * block per item (16 sums) gcc vectorizes each lane's fields and the lane form runs 2x the item form; with a
     * 1 x 8 block (8 sums) it vectorizes across the lanes instead, shuffling every strided load into place, and
     * runs 3x slower than the item form.
     */
    static final int MIN_LANE_MAJOR_STATE = 16;

    /** When a kernel gets a lane form. */
    public enum Rule {
        /**
         * When it pays: some loop of uniform bounds runs per-lane work, every access inside such a loop is
         * uniform, at consecutive addresses across the lanes (index affine in {@code global_id(0)} with
         * coefficient 1) or at a constant stride of at most {@link #MAX_STRIDE} elements, no loop of varying
         * bounds runs inside one, and at most {@link #MAX_ARRAYS} variables are kept per lane.
         */
        AUTO,
        /** Never (to compare the two forms). */
        OFF,
        /** Whenever it is correct (tests: the random differential suites run every kernel they can this way). */
        ALWAYS
    }

    /**
     * The lane form of a kernel.
     *
     * @param lane    statements that run inside a lane loop (by identity); the others run once per block
     * @param arrays  variables declared at block level and kept per lane, in declaration order (the writer makes one
     *                that only the lane loop declaring it uses a plain local of that loop instead)
     * @param laneMajor whether the variables kept per lane are laid out lane by lane (one struct per lane, its
     *                fields the variables in declaration order) rather than variable by variable (an array of
     *                {@link #WIDTH} per variable): chosen when some access in a uniform loop is strided across the
     *                lanes, where gcc vectorizes within one lane (a 2 x 8 block's 8 loads of {@code b} and 16 sums
     *                as vectors of the lane's own fields) rather than across lanes (which would shuffle every
     *                strided load into place)
     * @param derived immutable variables declared at block level that vary but are computed from the lane's ids,
     *                parameters, constants and uniform immutable variables alone (no load): never stored, their
     *                value is written where they are used (so {@code b[p*n + col]} with {@code col = global_id(0) * 8}
     *                reads at a stride gcc can see, where {@code b[p*n + col[l]]} would be a gather); their
     *                declarations write nothing
     */
    public record Plan(Set<Stmt> lane, Set<String> arrays, boolean laneMajor, Map<String, Expr> derived) {

        public boolean inLane(Stmt s) {
            return lane.contains(s);
        }
    }

    private final CheckedKernel k;
    private final GuardHoisting.Plan hoisting;
    private final Set<String> varying = new LinkedHashSet<>();
    private final Set<Stmt> lane = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Set<String> arrays = new LinkedHashSet<>();
    private final Map<String, Expr> derived = new LinkedHashMap<>();
    /** Expression nodes of each derived variable's value with the derived variables it uses written out. */
    private final Map<String, Integer> derivedSize = new HashMap<>();
    /** Whether some uniform loop runs per-lane work (the lane form pays only then). */
    private boolean loopOverLanes;
    /**
     * Whether every access in per-lane work inside a uniform loop is uniform, consecutive or at a small constant
     * stride across lanes (what {@link Rule#AUTO} requires).
     */
    private boolean consecutive = true;
    /** Whether some access in per-lane work inside a uniform loop is at a constant stride above 1 across lanes. */
    private boolean strided;
    private Function<Expr, GuardHoisting.Affine> affine;

    private LaneBlocks(CheckedKernel k, GuardHoisting.Plan hoisting) {
        this.k = k;
        this.hoisting = hoisting;
    }

    /**
     * The lane form of {@code k} under {@code rule}, or null when it gets none.
     *
     * @param hoisting the guards {@code k}'s renderer checks per block (the lane form requires every guard there)
     */
    public static Plan plan(CheckedKernel k, GuardHoisting.Plan hoisting, Rule rule) {
        if (rule == Rule.OFF || GroupPhases.needed(k) || !allGuardsHoisted(k, hoisting, k.kernel().body())) {
            return null;
        }
        LaneBlocks p = new LaneBlocks(k, hoisting);
        p.affine = GuardHoisting.affineForm(k);
        // a variable found varying changes what follows it and what came before it in a loop: repeat until stable
        int before;
        do {
            before = p.varying.size();
            p.lane.clear();
            p.arrays.clear();
            p.derived.clear();
            p.derivedSize.clear();
            p.loopOverLanes = false;
            p.consecutive = true;
            p.strided = false;
            p.block(k.kernel().body(), false, 0);
        } while (p.varying.size() != before);
        if (rule == Rule.AUTO && !(p.loopOverLanes && p.consecutive && p.arrays.size() <= MAX_ARRAYS
                && (!p.strided || p.mutableArrays() >= MIN_LANE_MAJOR_STATE))) {
            return null;
        }
        return new Plan(Collections.unmodifiableSet(p.lane), Collections.unmodifiableSet(p.arrays), p.strided,
                Collections.unmodifiableMap(p.derived));
    }

    /** Most expression nodes a derived variable's value may have, the derived variables it uses written out. */
    static final int MAX_DERIVED_SIZE = 32;

    /**
     * The nodes of {@code e} (derived variables written out) when it can be computed again wherever it is used:
     * no load, and every variable it reads immutable and uniform, or derived; else -1.
     */
    private int derivable(Expr e) {
        return switch (e) {
            case Expr.Builtin b -> 1;
            case Expr.Param p -> 1;
            case Expr.Const c -> 1;
            case Expr.Var v -> derived.containsKey(v.name()) ? derivedSize.get(v.name())
                    : k.isMutable(v.name()) || varying.contains(v.name()) ? -1 : 1;
            case Expr.Load l -> -1;
            case Expr.Unary u -> plus(1, derivable(u.operand()));
            case Expr.Cast c -> plus(1, derivable(c.operand()));
            case Expr.Binary b -> plus(1, plus(derivable(b.left()), derivable(b.right())));
            case Expr.Select x -> plus(1, plus(derivable(x.condition()), plus(derivable(x.ifTrue()), derivable(x.ifFalse()))));
            case Expr.Fma f -> plus(1, plus(derivable(f.a()), plus(derivable(f.b()), derivable(f.c()))));
        };
    }

    private static int plus(int a, int b) {
        return a < 0 || b < 0 ? -1 : a + b;
    }

    /** Whether every guarded access under {@code body} is checked per block. */
    private static boolean allGuardsHoisted(CheckedKernel k, GuardHoisting.Plan h, List<Stmt> body) {
        for (Stmt s : body) {
            boolean ok = switch (s) {
                case Stmt.Let l -> allGuardsHoisted(k, h, l.value());
                case Stmt.Assign a -> allGuardsHoisted(k, h, a.value());
                case Stmt.Store st -> (!k.guarded(st) || h.hoisted(st)) && allGuardsHoisted(k, h, st.index())
                        && allGuardsHoisted(k, h, st.value());
                case Stmt.Accumulate acc -> (acc.index() == null
                        || ((!k.guarded(acc) || h.hoisted(acc)) && allGuardsHoisted(k, h, acc.index())))
                        && allGuardsHoisted(k, h, acc.value());
                case Stmt.If i -> allGuardsHoisted(k, h, i.condition()) && allGuardsHoisted(k, h, i.thenBody())
                        && allGuardsHoisted(k, h, i.elseBody());
                case Stmt.For f -> allGuardsHoisted(k, h, f.start()) && allGuardsHoisted(k, h, f.end())
                        && allGuardsHoisted(k, h, f.body());
                case Stmt.LocalArray la -> false;
                case Stmt.Barrier b -> false;
            };
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private static boolean allGuardsHoisted(CheckedKernel k, GuardHoisting.Plan h, Expr e) {
        return switch (e) {
            case Expr.Load l -> (!k.guarded(l) || h.hoisted(l)) && allGuardsHoisted(k, h, l.index());
            case Expr.Unary u -> allGuardsHoisted(k, h, u.operand());
            case Expr.Binary b -> allGuardsHoisted(k, h, b.left()) && allGuardsHoisted(k, h, b.right());
            case Expr.Select x -> allGuardsHoisted(k, h, x.condition()) && allGuardsHoisted(k, h, x.ifTrue())
                    && allGuardsHoisted(k, h, x.ifFalse());
            case Expr.Cast c -> allGuardsHoisted(k, h, c.operand());
            case Expr.Fma f -> allGuardsHoisted(k, h, f.a()) && allGuardsHoisted(k, h, f.b()) && allGuardsHoisted(k, h, f.c());
            default -> true;
        };
    }

    /**
     * Classifies the statements of a block. {@code inLane}: the block runs inside a lane loop already (its
     * variables are private to the lane, and everything it assigns varies); {@code loops}: uniform loops around it.
     */
    private void block(List<Stmt> body, boolean inLane, int loops) {
        for (Stmt s : body) {
            if (inLane) {
                laneStmt(s);
                continue;
            }
            switch (s) {
                case Stmt.Let l -> {
                    if (varies(l.value()) || varying.contains(l.name())) {
                        int size = l.mutable() ? -1 : derivable(l.value());
                        varying.add(l.name());
                        if (size > 0 && size <= MAX_DERIVED_SIZE) {
                            derived.put(l.name(), l.value());
                            derivedSize.put(l.name(), size);
                        } else {
                            arrays.add(l.name());
                            perLane(s, loops);
                        }
                    }
                }
                case Stmt.Assign a -> {
                    if (varies(a.value()) || varying.contains(a.name())) {
                        varying.add(a.name());
                        perLane(s, loops);
                    }
                }
                case Stmt.Accumulate acc -> {
                    if (acc.index() != null || varies(acc.value()) || varying.contains(acc.target())) {
                        if (acc.index() == null) {
                            varying.add(acc.target());
                        }
                        perLane(s, loops);
                    }
                }
                case Stmt.Store st -> perLane(s, loops);
                case Stmt.If i -> {
                    if (hoisting.hoistedCondition(i)) {
                        // true for every item of a block that passed the check: only its then-body runs
                        block(i.thenBody(), false, loops);
                    } else if (varies(i.condition())) {
                        perLane(s, loops);
                    } else {
                        block(i.thenBody(), false, loops);
                        block(i.elseBody(), false, loops);
                    }
                }
                case Stmt.For f -> {
                    if (varies(f.start()) || varies(f.end())) {
                        if (loops > 0) {
                            consecutive = false; // a loop per lane inside a uniform loop: nothing to vectorize
                        }
                        perLane(s, loops);
                    } else {
                        block(f.body(), false, loops + 1);
                    }
                }
                case Stmt.LocalArray la -> throw new IllegalStateException("phased kernels have no lane form");
                case Stmt.Barrier b -> throw new IllegalStateException("phased kernels have no lane form");
            }
        }
    }

    /** {@code s} runs inside a lane loop: everything it assigns varies, and its accesses are checked for stride. */
    private void perLane(Stmt s, int loops) {
        lane.add(s);
        if (loops > 0) {
            loopOverLanes = true;
        }
        laneStmt(s);
        if (loops > 0 && affine != null) {
            accesses(s);
        }
    }

    /** Marks every variable {@code s} (run per lane) assigns as varying. */
    private void laneStmt(Stmt s) {
        switch (s) {
            case Stmt.Let l -> varying.add(l.name());
            case Stmt.Assign a -> varying.add(a.name());
            case Stmt.Accumulate acc -> {
                if (acc.index() == null) {
                    varying.add(acc.target());
                }
            }
            case Stmt.If i -> {
                block(i.thenBody(), true, 0);
                block(i.elseBody(), true, 0);
            }
            case Stmt.For f -> {
                varying.add(f.var());
                block(f.body(), true, 0);
            }
            default -> { }
        }
    }

    /** Whether {@code e} can differ between the lanes of a block. */
    private boolean varies(Expr e) {
        return switch (e) {
            case Expr.Builtin b -> b.dim() == 0 && (b.kind() == Expr.Builtin.Kind.GLOBAL_ID
                    || b.kind() == Expr.Builtin.Kind.LOCAL_ID || b.kind() == Expr.Builtin.Kind.GROUP_ID);
            case Expr.Var v -> varying.contains(v.name());
            case Expr.Load l -> varies(l.index());
            case Expr.Unary u -> varies(u.operand());
            case Expr.Binary b -> varies(b.left()) || varies(b.right());
            case Expr.Select x -> varies(x.condition()) || varies(x.ifTrue()) || varies(x.ifFalse());
            case Expr.Cast c -> varies(c.operand());
            case Expr.Fma f -> varies(f.a()) || varies(f.b()) || varies(f.c());
            case Expr.Const c -> false;
            case Expr.Param p -> false;
        };
    }

    /** Checks every access of {@code s} (per lane, inside a uniform loop) for consecutive addresses. */
    private void accesses(Stmt s) {
        switch (s) {
            case Stmt.Let l -> accesses(l.value());
            case Stmt.Assign a -> accesses(a.value());
            case Stmt.Store st -> {
                access(st.index());
                accesses(st.index());
                accesses(st.value());
            }
            case Stmt.Accumulate acc -> {
                if (acc.index() != null) {
                    access(acc.index());
                    accesses(acc.index());
                }
                accesses(acc.value());
            }
            case Stmt.If i -> {
                accesses(i.condition());
                i.thenBody().forEach(this::accesses);
                i.elseBody().forEach(this::accesses);
            }
            case Stmt.For f -> consecutive = false;
            default -> { }
        }
    }

    private void accesses(Expr e) {
        switch (e) {
            case Expr.Load l -> {
                access(l.index());
                accesses(l.index());
            }
            case Expr.Unary u -> accesses(u.operand());
            case Expr.Binary b -> {
                accesses(b.left());
                accesses(b.right());
            }
            case Expr.Select x -> {
                accesses(x.condition());
                accesses(x.ifTrue());
                accesses(x.ifFalse());
            }
            case Expr.Cast c -> accesses(c.operand());
            case Expr.Fma f -> {
                accesses(f.a());
                accesses(f.b());
                accesses(f.c());
            }
            default -> { }
        }
    }

    private int mutableArrays() {
        int n = 0;
        for (String name : arrays) {
            if (k.isMutable(name)) {
                n++;
            }
        }
        return n;
    }

    /** The value of {@code t} when all its factors are integer constants, else 0. */
    private static long constant(GuardHoisting.Term t) {
        long v = t.scale();
        for (Expr f : t.factors()) {
            if (!(f instanceof Expr.Const c && c.type().isInteger()) || Math.abs(c.bits()) > MAX_STRIDE) {
                return 0;
            }
            v *= c.bits();
        }
        return Math.abs(v) > MAX_STRIDE ? 0 : v;
    }

    /**
     * An index is fine when uniform, or affine in {@code global_id(0)} with a constant coefficient from 1 to
     * {@link #MAX_STRIDE} (above 1: {@link #strided}).
     */
    private void access(Expr index) {
        if (!varies(index)) {
            return;
        }
        GuardHoisting.Affine a = affine.apply(index);
        if (a == null) {
            consecutive = false;
            return;
        }
        for (Map.Entry<String, List<GuardHoisting.Term>> c : a.coefficients().entrySet()) {
            if (c.getKey().equals("#g0")) {
                List<GuardHoisting.Term> t = c.getValue();
                long scale = t.size() == 1 ? constant(t.getFirst()) : 0;
                if (scale < 1 || scale > MAX_STRIDE) {
                    consecutive = false;
                } else if (scale > 1) {
                    strided = true;
                }
            } else if (varying.contains(c.getKey()) || c.getKey().equals("#l0")) {
                consecutive = false; // a loop variable of a per-lane loop, or the local id along the lanes
            }
        }
    }
}
