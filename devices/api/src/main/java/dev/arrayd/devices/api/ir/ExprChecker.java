package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Quote;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The expression half of {@link IrValidator}'s pass over one kernel: types every expression, computes the range of
 * every integer one (narrowed by what enclosing conditions tell, {@link ConditionFacts}), and records for every load
 * and store whether its index needs a guard. The tables it reads (parameters, local arrays, the symbols that ranges
 * may name, buffers' declared extents) are the validator's, filled as the pass declares them.
 */
final class ExprChecker {

    private final IrKernel kernel;
    private final Map<String, Integer> paramIndex;
    private final Map<String, Stmt.LocalArray> locals;
    private final Map<String, long[]> symbols;
    private final Map<String, Poly> extentPolys;
    private final Map<String, Long> extentLows;
    /** Every expression's type (recorded on the first evaluation). */
    final IdentityHashMap<Expr, IrType> types = new IdentityHashMap<>();
    /** For every load, store and accumulate into an array: whether its index needs a guard. */
    final IdentityHashMap<Object, Boolean> guards = new IdentityHashMap<>();
    /** What branch conditions tell about ranges, over this pass's types and ranges. */
    final ConditionFacts conditions;

    ExprChecker(IrKernel kernel, Map<String, Integer> paramIndex, Map<String, Stmt.LocalArray> locals,
            Map<String, long[]> symbols, Map<String, Poly> extentPolys, Map<String, Long> extentLows,
            Set<String> mutableVars) {
        this.kernel = kernel;
        this.paramIndex = paramIndex;
        this.locals = locals;
        this.symbols = symbols;
        this.extentPolys = extentPolys;
        this.extentLows = extentLows;
        this.conditions = new ConditionFacts(new ConditionFacts.Ranges() {
            @Override
            public IrType type(Expr e) {
                return types.get(e);
            }

            @Override
            public Range range(Expr e, IrScope s) {
                return expr(e, "", s, false).range;
            }

            @Override
            public boolean mutable(String var) {
                return mutableVars.contains(var);
            }
        });
    }


    /** An expression's type, its range (integers), and whether it is the same in every work-item of a group. */
    record Val(IrType type, Range range, boolean uniform) {}

    /** Fails with INVALID_ARGUMENT at {@code at} unless {@code got} is {@code expected}. */
    static void expectType(IrType got, IrType expected, String at) {
        if (got != expected) {
            throw ArraydException.invalid(at + ": " + expected + " expected, got " + got);
        }
    }

    /**
     * Types {@code e} and computes its range. {@code record} is false for re-evaluations done by
     * refinement: they neither record types nor guards (the first pass did).
     */
    Val expr(Expr e, String at, IrScope s, boolean record) {
        Val v = exprNoFacts(e, at, s, record);
        if (v.type.isInteger()) {
            Range f = s.fact(e);
            if (f != null) {
                v = new Val(v.type, v.range.intersect(f), v.uniform);
            }
        }
        if (record) {
            types.put(e, v.type);
        }
        return v;
    }

    private Val exprNoFacts(Expr e, String at, IrScope s, boolean record) {
        switch (e) {
            case null -> throw ArraydException.invalid(at + ": unset (expected: an expression)");
            case Expr.Const c -> {
                String p = at + ".constant";
                if (c.type() == null) {
                    throw ArraydException.invalid(p + ": no value set");
                }
                if (c.type().isInteger() || c.type() == IrType.BOOL) {
                    if (c.bits() < c.type().min() || c.bits() > c.type().max()) {
                        throw ArraydException.invalid(p + "." + c.type() + ": " + c.bits() + " (expected: within " + c.type() + ")");
                    }
                    return new Val(c.type(), Range.of(c.bits(), c.bits()), true);
                }
                return new Val(c.type(), Range.top(c.type()), true);
            }
            case Expr.Param p -> {
                Integer i = paramIndex.get(p.name());
                if (i == null) {
                    throw ArraydException.invalid(at + ".param: " + Quote.string(p.name()) + " (expected: a parameter of kernel "
                            + kernel.name() + ")");
                }
                if (!(kernel.params().get(i) instanceof IrParam.Scalar sp)) {
                    throw ArraydException.invalid(at + ".param: " + Quote.string(p.name())
                            + " is a buffer (expected: a scalar parameter; read a buffer with load)");
                }
                IrType t = IrType.ofScalar(sp.dtype());
                if (!t.isInteger()) {
                    return new Val(t, Range.top(t), true);
                }
                long lo = sp.min() == null ? t.min() : sp.min();
                long hi = sp.max() == null ? t.max() : sp.max();
                List<Poly> u = symbols.containsKey(p.name()) ? List.of(Poly.symbol(p.name())) : List.of();
                return new Val(t, new Range(lo, hi, u, u), true);
            }
            case Expr.Var v -> {
                IrScope.Var info = s.lookup(v.name());
                if (info == null) {
                    throw ArraydException.invalid(at + ".var: " + Quote.string(v.name()) + " (expected: a variable declared before, in scope)");
                }
                return new Val(info.type(), info.range(), info.uniform());
            }
            case Expr.Builtin b -> {
                String p = at + ".builtin";
                if (b.kind() == null) {
                    throw ArraydException.invalid(p + ".kind: unset");
                }
                if (b.dim() < 0 || b.dim() >= kernel.gridDims()) {
                    throw ArraydException.invalid(p + ".dim: " + b.dim() + " (expected: below grid_dims = " + kernel.gridDims() + ")");
                }
                return new Val(IrType.I64, IntRanges.builtin(b, kernel.localSize()), b.kind() != Expr.Builtin.Kind.GLOBAL_ID
                        && b.kind() != Expr.Builtin.Kind.LOCAL_ID);
            }
            case Expr.Load l -> {
                String p = at + ".load";
                IrType t = readableArray(l.array(), p + ".array");
                Val idx = record ? index(l.index(), p + ".index", s) : expr(l.index(), p, s, false);
                if (record) {
                    guard(l, l.array(), idx.range);
                }
                return new Val(t, Range.top(t), false);
            }
            case Expr.Unary u -> {
                String p = at + ".unary";
                Val a = expr(u.operand(), p + ".operand", s, record);
                if (u.op() == null) {
                    throw ArraydException.invalid(p + ".op: unset");
                }
                IrType t = a.type;
                boolean ok = switch (u.op()) {
                    case NEG, ABS -> t.isNumber();
                    case NOT -> t.isInteger() || t == IrType.BOOL;
                    default -> t.isFloat();
                };
                if (!ok) {
                    throw ArraydException.invalid(p + ".operand: " + t + " (expected: " + (u.op().isMath() ? "f32 or f64"
                            : u.op() == Expr.Unary.Op.NOT ? "bool or an integer" : "a number") + " for " + u.op() + ")");
                }
                Range r = Range.top(t);
                if (t.isInteger() && u.op() == Expr.Unary.Op.NEG && a.range.lo() > t.min()) {
                    r = Range.fit(t, -a.range.hi(), -a.range.lo(), List.of());
                } else if (t == IrType.BOOL) {
                    r = Range.of(0, 1);
                }
                return new Val(t, r, a.uniform);
            }
            case Expr.Binary b -> {
                return binary(b, at + ".binary", s, record);
            }
            case Expr.Select x -> {
                String p = at + ".select";
                Val c = expr(x.condition(), p + ".condition", s, record);
                expectType(c.type, IrType.BOOL, p + ".condition");
                Val t = expr(x.ifTrue(), p + ".if_true", conditions.refine(new IrScope(s), x.condition(), true), record);
                Val f = expr(x.ifFalse(), p + ".if_false", conditions.refine(new IrScope(s), x.condition(), false), record);
                expectType(f.type, t.type, p + ".if_false");
                return new Val(t.type, t.range.join(f.range), c.uniform && t.uniform && f.uniform);
            }
            case Expr.Cast c -> {
                String p = at + ".cast";
                if (c.to() == null) {
                    throw ArraydException.invalid(p + ".dtype: unset");
                }
                Val a = expr(c.operand(), p + ".operand", s, record);
                Range r;
                if (c.to() == IrType.BOOL) {
                    r = Range.of(0, 1);
                } else if (a.type.isInteger() || a.type == IrType.BOOL) {
                    r = c.to().isInteger() && a.range.lo() >= c.to().min() && a.range.hi() <= c.to().max()
                            ? a.range : Range.top(c.to());
                } else {
                    r = Range.top(c.to());
                }
                return new Val(c.to(), r, a.uniform);
            }
            case Expr.Fma f -> {
                String p = at + ".fma";
                Val a = expr(f.a(), p + ".a", s, record);
                if (!a.type.isFloat()) {
                    throw ArraydException.invalid(p + ".a: f32 or f64 expected, got " + a.type);
                }
                Val b2 = expr(f.b(), p + ".b", s, record);
                expectType(b2.type, a.type, p + ".b");
                Val c3 = expr(f.c(), p + ".c", s, record);
                expectType(c3.type, a.type, p + ".c");
                return new Val(a.type, Range.top(a.type), a.uniform && b2.uniform && c3.uniform);
            }
        }
    }

    private Val binary(Expr.Binary b, String p, IrScope s, boolean record) {
        if (b.op() == null) {
            throw ArraydException.invalid(p + ".op: unset");
        }
        Val l = expr(b.left(), p + ".left", s, record);
        IrScope rs = s;
        if (b.op() == Expr.Binary.Op.LOGICAL_AND) {
            rs = conditions.refine(new IrScope(s), b.left(), true);
        } else if (b.op() == Expr.Binary.Op.LOGICAL_OR) {
            rs = conditions.refine(new IrScope(s), b.left(), false);
        }
        Val r = expr(b.right(), p + ".right", rs, record);
        IrType t = l.type;
        boolean uniform = l.uniform && r.uniform;
        if (b.op().isShift()) {
            if (!t.isInteger()) {
                throw ArraydException.invalid(p + ".left: " + t + " (expected: an integer for " + b.op() + ")");
            }
        }
        expectType(r.type, t, p + ".right");
        Expr.Binary.Op op = b.op();
        if (op.isComparison()) {
            if (t == IrType.BOOL && op != Expr.Binary.Op.EQ && op != Expr.Binary.Op.NE) {
                throw ArraydException.invalid(p + ".left: bool (expected: a number for " + op + ")");
            }
            return new Val(IrType.BOOL, Range.of(0, 1), uniform);
        }
        if (op.isLogical()) {
            expectType(t, IrType.BOOL, p + ".left");
            return new Val(IrType.BOOL, Range.of(0, 1), uniform);
        }
        if (op.isBitwise()) {
            if (!t.isInteger() && t != IrType.BOOL) {
                throw ArraydException.invalid(p + ".left: " + t + " (expected: bool or an integer for " + op + ")");
            }
        } else if (op == Expr.Binary.Op.POW) {
            if (!t.isFloat()) {
                throw ArraydException.invalid(p + ".left: " + t + " (expected: f32 or f64 for POW)");
            }
        } else if (!op.isShift() && !t.isNumber()) {
            throw ArraydException.invalid(p + ".left: " + t + " (expected: a number for " + op + ")");
        }
        if (t == IrType.BOOL) {
            return new Val(t, Range.of(0, 1), uniform);
        }
        if (!t.isInteger()) {
            return new Val(t, Range.top(t), uniform);
        }
        return new Val(t, IntRanges.binary(op, t, l.range, r.range, symbols), uniform);
    }

    static String describe(Expr e) {
        return e == null ? "unset" : e.getClass().getSimpleName().toLowerCase(java.util.Locale.ROOT);
    }

    /** The element type of array {@code name}: a local array or a buffer parameter. */
    IrType readableArray(String name, String at) {
        Stmt.LocalArray la = locals.get(name);
        if (la != null) {
            return IrType.ofElement(la.dtype());
        }
        Integer i = paramIndex.get(name);
        if (i == null || !(kernel.params().get(i) instanceof IrParam.Buffer b)) {
            throw ArraydException.invalid(at + ": " + Quote.string(name) + " (expected: a buffer parameter or a local array declared before)");
        }
        return IrType.ofElement(b.dtype());
    }

    Val index(Expr e, String at, IrScope scope) {
        Val v = expr(e, at, scope, true);
        if (v.type != IrType.I32 && v.type != IrType.I64) {
            throw ArraydException.invalid(at + ": i32 or i64 expected, got " + v.type);
        }
        return v;
    }

    /** Records whether {@code node}'s access of {@code array} at {@code idx} needs a guard. */
    void guard(Object node, String array, Range idx) {
        boolean safe = (idx.lo() >= 0 || !idx.nonNegativeLowers(symbols).isEmpty()) && provenBelowExtent(array, idx);
        guards.merge(node, !safe, (a, b) -> a || b);
    }

    private boolean provenBelowExtent(String array, Range idx) {
        Stmt.LocalArray la = locals.get(array);
        if (la != null) {
            return idx.hi() < la.size();
        }
        Long low = extentLows.get(array);
        if (low != null && idx.hi() < low) {
            return true;
        }
        Poly extent = extentPolys.get(array);
        if (extent == null) {
            return false;
        }
        for (Poly u : idx.uppers()) {
            try {
                if (extent.subtract(u).provablyPositive(symbols)) {
                    return true;
                }
            } catch (ArithmeticException e) {
                // this bound proves nothing
            }
        }
        return false;
    }
}
