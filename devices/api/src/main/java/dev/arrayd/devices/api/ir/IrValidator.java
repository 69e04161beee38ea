package dev.arrayd.devices.api.ir;

import static dev.arrayd.devices.api.ir.ExprChecker.expectType;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Quote;
import dev.arrayd.devices.api.ir.ExprChecker.Val;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Checks an IR module before anything renders or runs it: names and scopes, types, loop bounds,
 * barrier placement, grid and local limits, and the range of every index against its array's
 * extent. A problem is INVALID_ARGUMENT naming the node by its path, e.g.
 * {@code kernels[0].body[3].store.index: i32 or i64 expected, got f32}.
 *
 * <h2>Range analysis</h2>
 * One forward pass computes, for each integer expression, a numeric interval and symbolic upper
 * bounds ({@link Poly} over non-negative parameters and the grid's sizes). Conditions refine what is
 * known inside branches ({@code if (i < n)} bounds {@code i} by {@code n - 1}); loops bound their
 * variable by their end. An access is proven in bounds when its index is at least 0 and below its
 * extent: a local array's size, or a buffer's declared {@code min_extent} (checked against the bound
 * buffer at launch). Every other access keeps a guard. Ranges are sound under wrapping: a result that
 * could leave its type gives the type's full range.
 *
 * <p>This class checks the module, the kernels' declarations and statements; {@link ExprChecker} types the
 * expressions, computes their ranges and decides the guards.
 */
public final class IrValidator {

    /** Largest global size per dimension of an IR launch; keeps index arithmetic on ids far from overflow. */
    public static final long MAX_GLOBAL_SIZE = (1L << 31) - 1;
    /** Largest work-group (items), and the bound on a local id when no local size is declared. */
    public static final long MAX_GROUP_SIZE = 1024;
    /** Local arrays of one kernel, in bytes: what every backend can give a group (CUDA's static shared limit). */
    public static final long MAX_LOCAL_BYTES = 48 * 1024;
    public static final long MAX_TRIPS = 1L << 24;
    public static final long MAX_NEST_TRIPS = 1L << 32;

    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");

    private IrValidator() {}

    /** Validates every kernel; {@code path} prefixes messages (e.g. {@code "modules[0].ir"}, or empty). */
    public static List<CheckedKernel> check(IrModule module, String path) {
        String at = path.isEmpty() ? "" : path + ".";
        if (module.kernels().isEmpty()) {
            throw ArraydException.invalid(at + "kernels: none (expected: at least one)");
        }
        Set<String> names = new HashSet<>();
        List<CheckedKernel> out = new ArrayList<>();
        for (int i = 0; i < module.kernels().size(); i++) {
            IrKernel k = module.kernels().get(i);
            String where = at + "kernels[" + i + "]";
            if (!names.add(k.name())) {
                throw ArraydException.invalid(where + ".name: " + Quote.string(k.name()) + " (expected: a name no other kernel of the module has)");
            }
            out.add(new KernelChecker(k, where).check());
        }
        return out;
    }

    static void checkName(String name, String where) {
        if (name == null || !IDENTIFIER.matcher(name).matches() || name.startsWith("arrayd") || name.startsWith("__")) {
            throw ArraydException.invalid(where + ": " + Quote.string(name)
                    + " (expected: a C identifier of at most 64 characters, not starting with \"arrayd\" or \"__\")");
        }
    }

    /** One kernel's pass. */
    private static final class KernelChecker {
        private final IrKernel kernel;
        private final String where;
        private final Map<String, IrType> varTypes = new HashMap<>();
        private final Set<String> mutableVars = new HashSet<>();
        private final Map<String, Stmt.LocalArray> locals = new LinkedHashMap<>();
        private final Map<String, Integer> paramIndex = new HashMap<>();
        private final Set<String> declared = new HashSet<>();
        private final Map<String, long[]> symbols = new HashMap<>();
        private final Map<String, Poly> extentPolys = new HashMap<>();
        private final Map<String, Long> extentLows = new HashMap<>();
        private boolean usesBarrier;
        private long localBytes;
        /** Types expressions and bounds their ranges, over the tables above. */
        private final ExprChecker exprs;

        KernelChecker(IrKernel kernel, String where) {
            this.kernel = kernel;
            this.where = where;
            this.exprs = new ExprChecker(kernel, paramIndex, locals, symbols, extentPolys, extentLows, mutableVars);
        }

        CheckedKernel check() {
            checkName(kernel.name(), where + ".name");
            if (kernel.gridDims() < 1 || kernel.gridDims() > 3) {
                throw ArraydException.invalid(where + ".grid_dims: " + kernel.gridDims() + " (expected: 1, 2 or 3)");
            }
            List<Long> ls = kernel.localSize();
            if (!ls.isEmpty()) {
                if (ls.size() != kernel.gridDims()) {
                    throw ArraydException.invalid(where + ".local_size: " + ls + " (expected: " + kernel.gridDims()
                            + " entries, one per grid dimension, or none)");
                }
                long product = 1;
                for (int d = 0; d < ls.size(); d++) {
                    if (ls.get(d) < 1 || ls.get(d) > MAX_GROUP_SIZE) {
                        throw ArraydException.invalid(where + ".local_size[" + d + "]: " + ls.get(d) + " (expected: 1 to "
                                + MAX_GROUP_SIZE + ")");
                    }
                    product *= ls.get(d);
                }
                if (product > MAX_GROUP_SIZE) {
                    throw ArraydException.invalid(where + ".local_size: " + ls + " (expected: at most " + MAX_GROUP_SIZE
                            + " work-items per group, got " + product + ")");
                }
            }
            for (int d = 0; d < 3; d++) {
                symbols.put("$gs" + d, new long[] {1, MAX_GLOBAL_SIZE});
                symbols.put("$ls" + d, new long[] {1, MAX_GROUP_SIZE});
            }
            checkParams();
            IrScope top = new IrScope(null);
            block(kernel.body(), where + ".body", top, true, 0, 1);
            return new CheckedKernel(kernel, exprs.types, exprs.guards, varTypes, mutableVars, locals, paramIndex, usesBarrier);
        }

        private void checkParams() {
            List<IrParam> params = kernel.params();
            for (int i = 0; i < params.size(); i++) {
                IrParam p = params.get(i);
                String at = where + ".params[" + i + "]";
                checkName(p.name(), at + ".name");
                declare(p.name(), at + ".name");
                paramIndex.put(p.name(), i);
                if (p instanceof IrParam.Scalar s) {
                    IrType t = IrType.ofScalar(s.dtype());
                    if (t == null) {
                        throw ArraydException.invalid(at + ".scalar.dtype: " + s.dtype().wireName()
                                + " (expected: f32, f64, i32, i64 or u8; half types are storage only)");
                    }
                    if ((s.min() != null || s.max() != null) && !t.isInteger()) {
                        throw ArraydException.invalid(at + ".scalar: min / max on a " + t + " scalar (expected: only on integers)");
                    }
                    long lo = s.min() == null ? t.min() : s.min();
                    long hi = s.max() == null ? t.max() : s.max();
                    if (lo < t.min() || hi > t.max() || lo > hi) {
                        throw ArraydException.invalid(at + ".scalar: bounds [" + lo + ", " + hi + "] (expected: min <= max within "
                                + t + ")");
                    }
                    if (t.isInteger() && lo >= 0) {
                        symbols.put(p.name(), new long[] {lo, hi});
                    }
                }
            }
            for (int i = 0; i < params.size(); i++) {
                if (params.get(i) instanceof IrParam.Buffer b && b.minExtent() != null) {
                    String at = where + ".params[" + i + "].buffer.min_extent";
                    Val v = exprs.expr(b.minExtent(), at, new IrScope(null), false);
                    if (!v.type().isInteger() || v.type() == IrType.U8) {
                        throw ArraydException.invalid(at + ": i32 or i64 expected, got " + v.type());
                    }
                    extentPolys.put(b.name(), exactPoly(b.minExtent(), at));
                    extentLows.put(b.name(), v.range().lo());
                }
            }
        }

        private Poly exactPoly(Expr e, String at) {
            try {
                return switch (e) {
                    case Expr.Const c -> Poly.constant(c.bits());
                    case Expr.Param p when symbols.containsKey(p.name()) -> Poly.symbol(p.name());
                    case Expr.Builtin b when b.kind() == Expr.Builtin.Kind.GLOBAL_SIZE && b.dim() >= 0
                            && b.dim() < kernel.gridDims() -> Poly.symbol("$gs" + b.dim());
                    case Expr.Cast c when c.to() == IrType.I64 -> exactPoly(c.operand(), at + ".cast.operand");
                    case Expr.Binary b when b.op() == Expr.Binary.Op.ADD ->
                            exactPoly(b.left(), at + ".binary.left").add(exactPoly(b.right(), at + ".binary.right"));
                    case Expr.Binary b when b.op() == Expr.Binary.Op.SUB ->
                            exactPoly(b.left(), at + ".binary.left").subtract(exactPoly(b.right(), at + ".binary.right"));
                    case Expr.Binary b when b.op() == Expr.Binary.Op.MUL ->
                            exactPoly(b.left(), at + ".binary.left").multiply(exactPoly(b.right(), at + ".binary.right"));
                    default -> throw ArraydException.invalid(at + ": " + ExprChecker.describe(e) + " (expected: integer constants, integer "
                            + "scalar parameters with min >= 0, global sizes, casts to i64, +, - and *)");
                };
            } catch (ArithmeticException ex) {
                throw ArraydException.invalid(at + ": overflows (expected: coefficients below 2^63)");
            }
        }

        private void declare(String name, String at) {
            if (!declared.add(name)) {
                throw ArraydException.invalid(at + ": " + Quote.string(name) + " is already declared in kernel " + kernel.name()
                        + " (expected: a fresh name; IR names are never shadowed)");
            }
        }

        // ---------------------------------------------------------------- statements

        private void block(List<Stmt> body, String at, IrScope scope, boolean uniform, int depth, long trips) {
            for (int i = 0; i < body.size(); i++) {
                stmt(body.get(i), at + "[" + i + "]", scope, uniform, depth, trips);
            }
        }

        private void stmt(Stmt s, String at, IrScope scope, boolean uniform, int depth, long trips) {
            switch (s) {
                case null -> throw ArraydException.invalid(at + ": unset (expected: a statement)");
                case Stmt.Let let -> {
                    String p = at + ".let";
                    checkName(let.name(), p + ".name");
                    Val v = exprs.expr(let.value(), p + ".value", scope, true);
                    declare(let.name(), p + ".name");
                    varTypes.put(let.name(), v.type());
                    if (let.mutable()) {
                        mutableVars.add(let.name());
                        scope.vars.put(let.name(), new IrScope.Var(v.type(), true, false, Range.top(v.type())));
                    } else {
                        scope.vars.put(let.name(), new IrScope.Var(v.type(), false, v.uniform(), v.range()));
                    }
                }
                case Stmt.Assign a -> {
                    String p = at + ".assign";
                    IrScope.Var var = mutableVar(a.name(), p + ".name", scope);
                    Val v = exprs.expr(a.value(), p + ".value", scope, true);
                    expectType(v.type(), var.type(), p + ".value");
                }
                case Stmt.Store st -> {
                    String p = at + ".store";
                    IrType elem = writableArray(st.array(), p + ".array");
                    Val idx = exprs.index(st.index(), p + ".index", scope);
                    Val v = exprs.expr(st.value(), p + ".value", scope, true);
                    expectType(v.type(), elem, p + ".value");
                    exprs.guard(st, st.array(), idx.range());
                }
                case Stmt.Accumulate acc -> {
                    String p = at + ".accumulate";
                    if (acc.op() == null) {
                        throw ArraydException.invalid(p + ".op: unset (expected: ADD, MAX or MIN)");
                    }
                    IrType target;
                    if (acc.index() == null) {
                        target = mutableVar(acc.target(), p + ".target", scope).type();
                    } else {
                        target = writableArray(acc.target(), p + ".target");
                        Val idx = exprs.index(acc.index(), p + ".index", scope);
                        exprs.guard(acc, acc.target(), idx.range());
                    }
                    if (!target.isNumber()) {
                        throw ArraydException.invalid(p + ".target: " + target + " (expected: a number to accumulate into)");
                    }
                    Val v = exprs.expr(acc.value(), p + ".value", scope, true);
                    expectType(v.type(), target, p + ".value");
                }
                case Stmt.If branch -> {
                    String p = at + ".branch";
                    Val c = exprs.expr(branch.condition(), p + ".condition", scope, true);
                    expectType(c.type(), IrType.BOOL, p + ".condition");
                    boolean inner = uniform && c.uniform();
                    IrScope thenScope = exprs.conditions.refine(new IrScope(scope), branch.condition(), true);
                    block(branch.thenBody(), p + ".then_body", thenScope, inner, depth + 1, trips);
                    IrScope elseScope = exprs.conditions.refine(new IrScope(scope), branch.condition(), false);
                    block(branch.elseBody(), p + ".else_body", elseScope, inner, depth + 1, trips);
                }
                case Stmt.For loop -> forLoop(loop, at + ".loop", scope, uniform, depth, trips);
                case Stmt.LocalArray la -> {
                    String p = at + ".local_array";
                    checkName(la.name(), p + ".name");
                    if (depth != 0) {
                        throw ArraydException.invalid(p + ": inside a block (expected: at the top level of the kernel body)");
                    }
                    if (kernel.localSize().isEmpty()) {
                        throw ArraydException.invalid(p + ": kernel " + kernel.name()
                                + " declares no local_size (expected: a local size, which sizes work-group storage)");
                    }
                    if (IrType.ofScalar(la.dtype()) == null) {
                        throw ArraydException.invalid(p + ".dtype: " + la.dtype().wireName() + " (expected: f32, f64, i32, i64 or u8)");
                    }
                    if (la.size() < 1) {
                        throw ArraydException.invalid(p + ".size: " + la.size() + " (expected: >= 1)");
                    }
                    long bytes = localBytes + la.size() * la.dtype().byteSize();
                    if (la.size() > MAX_LOCAL_BYTES || bytes > MAX_LOCAL_BYTES) {
                        throw ArraydException.invalid(p + ".size: " + la.size() + " (expected: local arrays of at most "
                                + MAX_LOCAL_BYTES + " bytes in all per kernel)");
                    }
                    localBytes = bytes;
                    declare(la.name(), p + ".name");
                    locals.put(la.name(), la);
                }
                case Stmt.Barrier b -> {
                    if (kernel.localSize().isEmpty()) {
                        throw ArraydException.invalid(at + ".barrier: kernel " + kernel.name()
                                + " declares no local_size (expected: a local size for kernels with barriers)");
                    }
                    if (!uniform) {
                        throw ArraydException.invalid(at + ".barrier: in divergent control flow (expected: only inside ifs and"
                                + " loops whose conditions and bounds are the same for every work-item of a group: no ids,"
                                + " loads or mutable variables)");
                    }
                    usesBarrier = true;
                }
            }
        }

        private void forLoop(Stmt.For loop, String p, IrScope scope, boolean uniform, int depth, long trips) {
            checkName(loop.var(), p + ".var");
            Val start = exprs.expr(loop.start(), p + ".start", scope, true);
            Val end = exprs.expr(loop.end(), p + ".end", scope, true);
            if (start.type() != IrType.I32 && start.type() != IrType.I64) {
                throw ArraydException.invalid(p + ".start: i32 or i64 expected, got " + start.type());
            }
            expectType(end.type(), start.type(), p + ".end");
            if (loop.step() < 1) {
                throw ArraydException.invalid(p + ".step: " + loop.step() + " (expected: >= 1)");
            }
            if (end.range().hi() > start.type().max() - loop.step()) {
                throw ArraydException.invalid(p + ".end: may reach " + end.range().hi() + " (expected: at most "
                        + (start.type().max() - loop.step()) + ", so that the loop variable cannot wrap)");
            }
            long span;
            try {
                span = Math.max(0, Math.subtractExact(end.range().hi(), start.range().lo()));
            } catch (ArithmeticException e) {
                span = Long.MAX_VALUE;
            }
            long n = span / loop.step() + (span % loop.step() == 0 ? 0 : 1);
            if (n > MAX_TRIPS) {
                throw ArraydException.invalid(p + ".end: may reach " + end.range().hi() + ", " + n + " trips from "
                        + start.range().lo() + " (expected: at most " + MAX_TRIPS + " trips: bound the loop by a constant or"
                        + " by a scalar parameter with a declared max)");
            }
            long nest;
            try {
                nest = Math.multiplyExact(trips, Math.max(1, n));
            } catch (ArithmeticException e) {
                nest = Long.MAX_VALUE;
            }
            if (nest > MAX_NEST_TRIPS) {
                throw ArraydException.invalid(p + ": a loop nest of up to " + nest + " trips (expected: at most "
                        + MAX_NEST_TRIPS + ")");
            }
            Range r;
            if (end.range().hi() - 1 < start.range().lo()) {
                r = Range.of(start.range().lo(), start.range().lo());
            } else {
                r = new Range(start.range().lo(), end.range().hi() - 1, Range.map(end.range().uppers(), u -> u.addConstant(-1)),
                        start.range().lowers());
            }
            IrScope body = new IrScope(scope);
            declare(loop.var(), p + ".var");
            varTypes.put(loop.var(), start.type());
            boolean u = start.uniform() && end.uniform();
            body.vars.put(loop.var(), new IrScope.Var(start.type(), false, u, r));
            block(loop.body(), p + ".body", body, uniform && u, depth + 1, nest);
        }

        private IrScope.Var mutableVar(String name, String at, IrScope scope) {
            IrScope.Var v = scope.lookup(name);
            if (v == null) {
                throw ArraydException.invalid(at + ": " + Quote.string(name) + " (expected: a variable declared before, in scope)");
            }
            if (!v.mutable()) {
                throw ArraydException.invalid(at + ": " + Quote.string(name) + " is immutable (expected: a variable declared with let mutable)");
            }
            return v;
        }

        private IrType writableArray(String name, String at) {
            IrType element = exprs.readableArray(name, at);
            if (!locals.containsKey(name) && kernel.params().get(paramIndex.get(name)) instanceof IrParam.Buffer b
                    && b.access() == Access.READ) {
                throw ArraydException.invalid(at + ": buffer " + name + " is declared READ (expected: WRITE or READ_WRITE to store to it)");
            }
            return element;
        }

    }
}
