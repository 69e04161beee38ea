package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.LongStream;

import static dev.arrayd.devices.api.ir.IrDsl.*;

/**
 * Random well-typed IR kernels over a fixed parameter list, for differential tests. Every kernel has
 * the same signature:
 * {@code (ii: i32[64] READ, fi: f32[64] READ, oi: i32 WRITE, of: f32 WRITE, oh: f16 WRITE, ol: i64 READ_WRITE,
 * s: i32 in [0, 16], t: f32)} and runs over a grid of {@link #GRID}. The read-only inputs are loaded at
 * random indices (some proven, some guarded and sometimes out of range). Outputs are stored, and
 * {@code ol} is also loaded, at the work-item's id or at a random index {@link #ownIndex folded onto
 * it} when in range: no element is touched by two work-items, so the results do not depend on the
 * order the items run in (a data race would make them undefined on a parallel device), while
 * out-of-range indices still hit guards.
 *
 * <p>Transcendental functions (exp, log, tanh, pow) appear only as the last operation before a store to
 * {@code of}, and such stores are flagged in {@link Program#approximate}: libm and Java may differ by
 * an ulp or two there, and nothing downstream amplifies it. Every other float operation is exactly
 * rounded on both sides and compared bit for bit.
 *
 * <p>Without {@code nanConstants}, no f32 value the compiler can know at build time is a NaN: no
 * constant is one, and an expression that would fold to one (say {@code 0 * inf} of constants, a
 * variable bound to such, a loop variable's trip values, {@code fmod(x, 0)}) is generated again. This
 * is for backends whose compiler mishandles a NaN it can see at build time. NaNs that arise at run
 * time (from NaN inputs, or from {@code sqrt} of a negative load) stay covered.
 */
final class RandomIrPrograms {

    static final int EXTENT = 64;
    static final int GRID = 64;

    private final Random r;
    private final boolean nanConstants;
    private final List<String[]> vars = new ArrayList<>(); // name, type
    private int names;
    private boolean approximate;
    /** Variables bound to values known at build time (tracked only without {@code nanConstants}). */
    private final Map<String, Known> known = new HashMap<>();
    /** The loop variable in scope and its trip values, when its bounds are constants. */
    private String loopVar;
    private long[] loopValues;

    RandomIrPrograms(long seed, boolean nanConstants) {
        r = new Random(seed);
        this.nanConstants = nanConstants;
    }

    record Program(IrKernel kernel, boolean approximate) {}

    static List<IrParam> params() {
        return List.of(
                new IrParam.Buffer("ii", DType.I32, Access.READ, i64(EXTENT)),
                new IrParam.Buffer("fi", DType.F32, Access.READ, i64(EXTENT)),
                new IrParam.Buffer("oi", DType.I32, Access.WRITE, i64(EXTENT)),
                new IrParam.Buffer("of", DType.F32, Access.WRITE, i64(EXTENT)),
                new IrParam.Buffer("oh", DType.F16, Access.WRITE, i64(EXTENT)),
                new IrParam.Buffer("ol", DType.I64, Access.READ_WRITE, null),
                new IrParam.Scalar("s", DType.I32, 0L, 16L),
                new IrParam.Scalar("t", DType.F32, null, null));
    }

    Program kernel(String name) {
        vars.clear();
        known.clear();
        approximate = false;
        List<Stmt> inner = new ArrayList<>();
        int n = 2 + r.nextInt(6);
        for (int i = 0; i < n; i++) {
            inner.add(stmt(0));
        }
        inner.add(store("oi", var("i"), expr(IrType.I32, 3)));
        inner.add(store("of", var("i"), floatOut()));
        inner.add(store("oh", var("i"), expr(IrType.F32, 2)));
        List<Stmt> body = List.of(let("i", gid(0)), new Stmt.If(lt(var("i"), i64(EXTENT)), inner, List.of()));
        return new Program(new IrKernel(name, params(), 1, List.of(), body), approximate);
    }

    /** Work-items per group of {@link #groupKernel}. */
    static final int GROUP = 16;

    /**
     * A kernel with local arrays and barriers, local size {@link #GROUP}: items exchange values through
     * local memory across barriers, at top level, inside a uniform loop and inside a uniform if, and
     * variables live across barriers (spilled per item on the CPU). Items store only their own
     * elements, of local arrays and of outputs, so the result does not depend on the order items run
     * in within a phase.
     */
    Program groupKernel(String name) {
        vars.clear();
        known.clear();
        approximate = false;
        Expr lid = lid(0);
        List<Stmt> body = new ArrayList<>();
        body.add(let("i", gid(0)));
        body.add(new Stmt.LocalArray("sh", DType.I32, GROUP));
        body.add(new Stmt.LocalArray("shf", DType.F32, GROUP));
        lets(body, 1 + r.nextInt(3));
        body.add(store("sh", lid, expr(IrType.I32, 3)));
        body.add(store("shf", lid, expr(IrType.F32, 2)));
        body.add(new Stmt.Barrier());
        body.add(let("a", load("sh", neighbour(lid))));
        body.add(let("b", load("shf", sub(i64(GROUP - 1), lid))));
        vars.add(new String[] {"a", IrType.I32.name()});
        vars.add(new String[] {"b", IrType.F32.name()});
        body.add(mut("acc", i32(0)));
        int mark = vars.size();
        vars.add(new String[] {"c", IrType.I32.name()});
        List<Stmt> loopBody = List.of(
                let("c", load("sh", neighbour(lid))),
                new Stmt.Assign("acc", add(var("acc"), var("c"))),
                new Stmt.Barrier(),
                store("sh", lid, expr(IrType.I32, 2)),
                new Stmt.Barrier());
        trim(mark);
        body.add(new Stmt.For("r", i32(0), i32(1 + r.nextInt(3)), 1, loopBody));
        body.add(new Stmt.If(bin(Expr.Binary.Op.GT, param("s"), i32(8)),
                List.of(new Stmt.Accumulate("sh", lid, Stmt.Accumulate.Op.ADD, i32(7)), new Stmt.Barrier()),
                List.of(new Stmt.Barrier())));
        vars.add(new String[] {"acc", IrType.I32.name()});
        body.add(let("d", load("sh", neighbour(lid))));
        vars.add(new String[] {"d", IrType.I32.name()});
        lets(body, r.nextInt(3));
        body.add(store("oi", var("i"), expr(IrType.I32, 3)));
        body.add(store("of", var("i"), floatOut()));
        body.add(store("oh", var("i"), expr(IrType.F32, 2)));
        return new Program(new IrKernel(name, params(), 1, List.of((long) GROUP), body), approximate);
    }

    /** {@code (lid + s + 1) & (GROUP - 1)}: another item's slot, proven in bounds by the mask. */
    private static Expr neighbour(Expr lid) {
        return cast(IrType.I64, bin(Expr.Binary.Op.AND, add(add(cast(IrType.I32, lid), param("s")), i32(1)), i32(GROUP - 1)));
    }

    private void lets(List<Stmt> body, int n) {
        for (int k = 0; k < n; k++) {
            IrType t = pick(IrType.I32, IrType.I64, IrType.F32, IrType.BOOL, IrType.U8);
            String v = fresh();
            body.add(bind(v, t, expr(t, 3)));
        }
    }

    private Expr floatOut() {
        Expr e = expr(IrType.F32, 3);
        if (r.nextInt(3) == 0) {
            Expr last = switch (r.nextInt(4)) {
                case 0 -> new Expr.Unary(Expr.Unary.Op.EXP, e);
                case 1 -> new Expr.Unary(Expr.Unary.Op.LOG, e);
                case 2 -> new Expr.Unary(Expr.Unary.Op.TANH, e);
                default -> bin(Expr.Binary.Op.POW, e, expr(IrType.F32, 1));
            };
            if (nanConstants || !nanAtBuildTime(last)) {
                approximate = true;
                return last;
            }
        }
        return e;
    }

    /** {@code let v = value}, noting the value where it is known at build time. */
    private Stmt bind(String v, IrType t, Expr value) {
        vars.add(new String[] {v, t.name()});
        if (!nanConstants) {
            Known k = evaluate(value, Map.of());
            if (k != null) {
                known.put(v, k);
            }
        }
        return let(v, value);
    }

    /** A value known at build time. */
    private record Known(IrType type, long bits) {
        boolean isNaN() {
            return type == IrType.F32 && Float.isNaN(Ops.asF32(bits));
        }
    }

    /** Whether a compiler could know that {@code e} is a NaN, in any trip of the loop in scope. */
    private boolean nanAtBuildTime(Expr e) {
        if (loopVar == null) {
            Known k = evaluate(e, Map.of());
            return k != null && k.isNaN();
        }
        for (long trip : loopValues) {
            Known k = evaluate(e, Map.of(loopVar, new Known(IrType.I32, trip)));
            if (k != null && k.isNaN()) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code e} folded the way a compiler may fold it (with the interpreter's operations), or null
     * where it depends on run-time values. A few operations are NaN whatever their run-time operand:
     * {@code fmod(x, ±0)}, {@code fmod(±inf, y)} and {@code fma(a, b, c)} with {@code a * b} a NaN.
     */
    private Known evaluate(Expr e, Map<String, Known> trip) {
        return switch (e) {
            case Expr.Const c -> new Known(c.type(), c.bits());
            case Expr.Var v -> trip.containsKey(v.name()) ? trip.get(v.name()) : known.get(v.name());
            case Expr.Param p -> null;
            case Expr.Builtin b -> null;
            case Expr.Load l -> null;
            case Expr.Unary u -> {
                Known a = evaluate(u.operand(), trip);
                yield a == null ? null : new Known(a.type(), Ops.unary(u.op(), a.type(), a.bits()));
            }
            case Expr.Binary b -> {
                Known x = evaluate(b.left(), trip);
                Known y = evaluate(b.right(), trip);
                boolean logical = b.op() == Expr.Binary.Op.LOGICAL_AND || b.op() == Expr.Binary.Op.LOGICAL_OR;
                if (logical && x != null) {
                    boolean decided = (x.bits() != 0) == (b.op() == Expr.Binary.Op.LOGICAL_OR);
                    yield decided ? new Known(IrType.BOOL, x.bits() != 0 ? 1 : 0) : y;
                }
                if (b.op() == Expr.Binary.Op.REM && (x != null && x.type() == IrType.F32 && Float.isInfinite(Ops.asF32(x.bits()))
                        || y != null && y.type() == IrType.F32 && Ops.asF32(y.bits()) == 0)) {
                    yield new Known(IrType.F32, Ops.f32(Float.NaN));
                }
                if (x == null || y == null) {
                    yield null;
                }
                long bits = Ops.binary(b.op(), x.type(), x.bits(), y.bits());
                yield new Known(switch (b.op()) {
                    case EQ, NE, LT, LE, GT, GE, LOGICAL_AND, LOGICAL_OR -> IrType.BOOL;
                    default -> x.type();
                }, bits);
            }
            case Expr.Select s -> {
                Known c = evaluate(s.condition(), trip);
                if (c != null) {
                    yield evaluate(c.bits() != 0 ? s.ifTrue() : s.ifFalse(), trip);
                }
                Known a = evaluate(s.ifTrue(), trip);
                Known b = evaluate(s.ifFalse(), trip);
                yield a != null && a.equals(b) ? a : null;
            }
            case Expr.Cast c -> {
                Known a = evaluate(c.operand(), trip);
                yield a == null ? null : new Known(c.to(), Ops.cast(a.type(), c.to(), a.bits()));
            }
            case Expr.Fma f -> {
                Known a = evaluate(f.a(), trip);
                Known b = evaluate(f.b(), trip);
                Known c = evaluate(f.c(), trip);
                if (a == null || b == null) {
                    yield null;
                }
                float ab = Ops.asF32(a.bits()) * Ops.asF32(b.bits());
                if (Float.isNaN(ab)) {
                    yield new Known(IrType.F32, Ops.f32(Float.NaN));
                }
                yield c == null ? null
                        : new Known(IrType.F32, Ops.f32(Math.fma(Ops.asF32(a.bits()), Ops.asF32(b.bits()), Ops.asF32(c.bits()))));
            }
        };
    }

    private String fresh() {
        return "v" + names++;
    }

    private Stmt stmt(int depth) {
        int k = r.nextInt(depth > 1 ? 4 : 7);
        switch (k) {
            case 0, 1 -> {
                IrType t = pick(IrType.I32, IrType.I64, IrType.F32, IrType.BOOL, IrType.U8);
                String v = fresh();
                return bind(v, t, expr(t, 3));
            }
            case 2 -> {
                return r.nextBoolean() ? store("oi", ownIndex(), expr(IrType.I32, 2)) : store("ol", ownIndex(), expr(IrType.I64, 2));
            }
            case 3 -> {
                // a random-index store of the right type
                return r.nextBoolean() ? store("oi", ownIndex(), expr(IrType.I32, 2))
                        : new Stmt.Accumulate("ol", ownIndex(), pick(Stmt.Accumulate.Op.values()), expr(IrType.I64, 2));
            }
            case 4 -> {
                int mark = vars.size();
                List<Stmt> then = List.of(stmt(depth + 1), stmt(depth + 1));
                trim(mark);
                List<Stmt> otherwise = r.nextBoolean() ? List.of(stmt(depth + 1)) : List.of();
                trim(mark);
                return new Stmt.If(expr(IrType.BOOL, 2), then, otherwise);
            }
            default -> {
                // a bounded loop accumulating into a fresh mutable variable, then stored
                IrType t = pick(IrType.I32, IrType.F32);
                String acc = fresh();
                String kv = fresh();
                int mark = vars.size();
                vars.add(new String[] {kv, IrType.I32.name()});
                Stmt.Accumulate.Op op = pick(Stmt.Accumulate.Op.values());
                int step = 1 + r.nextInt(2);
                Expr end = r.nextBoolean() ? param("s") : i32(r.nextInt(9));
                if (!nanConstants && end instanceof Expr.Const c) {
                    // unrolled, the loop variable is a constant in each copy of the body
                    loopVar = kv;
                    loopValues = LongStream.iterate(0, trip -> trip < c.bits(), trip -> trip + step).toArray();
                }
                Stmt accumulate = accVar(acc, op, expr(t, 2));
                loopVar = null;
                trim(mark);
                Stmt loop = new Stmt.For(kv, i32(0), end, step, List.of(accumulate));
                Stmt out = t == IrType.I32 ? store("oi", ownIndex(), var(acc)) : store("of", ownIndex(), var(acc));
                return new Stmt.If(Expr.Const.bool(true), List.of(mut(acc, t == IrType.I32 ? i32(1) : f32(0.5f)), loop, out),
                        List.of());
            }
        }
    }

    private void trim(int mark) {
        while (vars.size() > mark) {
            vars.removeLast();
        }
    }

    /**
     * A random {@link #index()} where it is out of range, the work-item's own id {@code i} where it is
     * in range: {@code select(0 <= j && j < EXTENT, i, j)}. Proven when {@code j} is.
     */
    private Expr ownIndex() {
        Expr j = index();
        Expr inRange = and(bin(Expr.Binary.Op.GE, j, i64(0)), lt(j, i64(EXTENT)));
        return new Expr.Select(inRange, var("i"), j);
    }

    /** An index: often proven (masked or the id), sometimes possibly out of range (guarded). */
    private Expr index() {
        return switch (r.nextInt(8)) {
            case 0, 1, 2 -> var("i");
            case 3, 4, 5 -> cast(IrType.I64, bin(Expr.Binary.Op.AND, expr(IrType.I32, 2), i32(EXTENT - 1)));
            case 6 -> cast(IrType.I64, bin(Expr.Binary.Op.REM, expr(IrType.I32, 2), i32(EXTENT + 8)));
            default -> sub(var("i"), cast(IrType.I64, bin(Expr.Binary.Op.AND, expr(IrType.I32, 1), i32(3))));
        };
    }

    @SafeVarargs
    private <T> T pick(T... options) {
        return options[r.nextInt(options.length)];
    }

    private Expr varOf(IrType t) {
        List<String> c = new ArrayList<>();
        for (String[] v : vars) {
            if (v[1].equals(t.name())) {
                c.add(v[0]);
            }
        }
        return c.isEmpty() ? null : var(c.get(r.nextInt(c.size())));
    }

    private Expr expr(IrType t, int depth) {
        Expr e = anyExpr(t, depth);
        for (int again = 0; !nanConstants && t == IrType.F32 && nanAtBuildTime(e); again++) {
            e = again < 8 ? anyExpr(t, depth) : f32(1f);
        }
        return e;
    }

    private Expr anyExpr(IrType t, int depth) {
        if (depth <= 0 || r.nextInt(5) == 0) {
            return leaf(t);
        }
        int d = depth - 1;
        switch (t) {
            case BOOL -> {
                return switch (r.nextInt(5)) {
                    case 0 -> bin(pick(Expr.Binary.Op.LT, Expr.Binary.Op.LE, Expr.Binary.Op.EQ, Expr.Binary.Op.NE,
                            Expr.Binary.Op.GT, Expr.Binary.Op.GE), expr(IrType.I32, d), expr(IrType.I32, d));
                    case 1 -> bin(pick(Expr.Binary.Op.LT, Expr.Binary.Op.GE, Expr.Binary.Op.EQ), expr(IrType.F32, d),
                            expr(IrType.F32, d));
                    case 2 -> bin(pick(Expr.Binary.Op.LOGICAL_AND, Expr.Binary.Op.LOGICAL_OR, Expr.Binary.Op.XOR,
                            Expr.Binary.Op.AND), expr(IrType.BOOL, d), expr(IrType.BOOL, d));
                    case 3 -> new Expr.Unary(Expr.Unary.Op.NOT, expr(IrType.BOOL, d));
                    default -> cast(IrType.BOOL, expr(pick(IrType.I32, IrType.F32), d));
                };
            }
            case F32 -> {
                return switch (r.nextInt(7)) {
                    case 0, 1 -> bin(pick(Expr.Binary.Op.ADD, Expr.Binary.Op.SUB, Expr.Binary.Op.MUL, Expr.Binary.Op.DIV,
                            Expr.Binary.Op.MIN, Expr.Binary.Op.MAX, Expr.Binary.Op.REM), expr(t, d), expr(t, d));
                    case 2 -> new Expr.Unary(pick(Expr.Unary.Op.NEG, Expr.Unary.Op.ABS, Expr.Unary.Op.SQRT,
                            Expr.Unary.Op.FLOOR, Expr.Unary.Op.CEIL), expr(t, d));
                    case 3 -> new Expr.Fma(expr(t, d), expr(t, d), expr(t, d));
                    case 4 -> cast(IrType.F32, expr(pick(IrType.I32, IrType.I64, IrType.U8, IrType.BOOL), d));
                    case 5 -> new Expr.Select(expr(IrType.BOOL, d), expr(t, d), expr(t, d));
                    default -> load("fi", index());
                };
            }
            default -> {
                return switch (r.nextInt(8)) {
                    case 0, 1 -> bin(pick(Expr.Binary.Op.ADD, Expr.Binary.Op.SUB, Expr.Binary.Op.MUL, Expr.Binary.Op.DIV,
                            Expr.Binary.Op.REM, Expr.Binary.Op.MIN, Expr.Binary.Op.MAX), expr(t, d), expr(t, d));
                    case 2 -> bin(pick(Expr.Binary.Op.AND, Expr.Binary.Op.OR, Expr.Binary.Op.XOR, Expr.Binary.Op.SHL,
                            Expr.Binary.Op.SHR), expr(t, d), expr(t, d));
                    case 3 -> new Expr.Unary(pick(Expr.Unary.Op.NEG, Expr.Unary.Op.ABS, Expr.Unary.Op.NOT), expr(t, d));
                    case 4 -> cast(t, expr(pick(IrType.I32, IrType.I64, IrType.U8, IrType.F32, IrType.BOOL), d));
                    case 5 -> new Expr.Select(expr(IrType.BOOL, d), expr(t, d), expr(t, d));
                    case 6 -> t == IrType.I32 ? load("ii", index()) : t == IrType.I64 ? load("ol", ownIndex()) : leaf(t);
                    default -> leaf(t);
                };
            }
        }
    }

    private Expr leaf(IrType t) {
        Expr v = r.nextInt(3) == 0 ? varOf(t) : null;
        if (v != null) {
            return v;
        }
        return switch (t) {
            case BOOL -> Expr.Const.bool(r.nextBoolean());
            case U8 -> Expr.Const.u8(r.nextInt(256));
            case I32 -> switch (r.nextInt(6)) {
                case 0 -> param("s");
                case 1 -> i32(pick(0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, 31, 32));
                case 2 -> cast(IrType.I32, gid(0));
                default -> i32(r.nextInt(200) - 100);
            };
            case I64 -> switch (r.nextInt(4)) {
                case 0 -> gid(0);
                case 1 -> i64(pick(0L, -1L, Long.MIN_VALUE, Long.MAX_VALUE, 1L << 40));
                default -> i64(r.nextInt(2000) - 1000);
            };
            case F32 -> switch (r.nextInt(6)) {
                case 0 -> param("t");
                case 1 -> f32(nanConstants
                        ? pick(0f, -0f, 1f, -1.5f, Float.NaN, Float.POSITIVE_INFINITY, 1e30f, 1e-40f, 65504f, 3e9f)
                        : pick(0f, -0f, 1f, -1.5f, Float.NEGATIVE_INFINITY, Float.POSITIVE_INFINITY, 1e30f, 1e-40f, 65504f, 3e9f));
                default -> f32((r.nextFloat() - 0.5f) * (1 << r.nextInt(20)));
            };
            case F64 -> Expr.Const.f64(r.nextDouble());
        };
    }
}
