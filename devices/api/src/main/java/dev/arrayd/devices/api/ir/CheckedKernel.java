package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;

import dev.arrayd.devices.api.Quote;
import dev.arrayd.devices.api.support.LaunchGrid;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A kernel that passed {@link IrValidator}: the types of its expressions, which accesses need a
 * guard (the others were proven in bounds), and the launch-time checks its proofs rely on. Renderers
 * and the interpreter work from this, never from an unchecked kernel.
 */
public final class CheckedKernel {

    private final IrKernel kernel;
    private final IdentityHashMap<Expr, IrType> types;
    private final IdentityHashMap<Object, Boolean> guards;
    private final Map<String, IrType> varTypes;
    private final Set<String> mutableVars;
    private final Map<String, Stmt.LocalArray> localArrays;
    private final Map<String, Integer> paramIndex;
    private final boolean usesBarrier;

    CheckedKernel(IrKernel kernel, IdentityHashMap<Expr, IrType> types, IdentityHashMap<Object, Boolean> guards,
                  Map<String, IrType> varTypes, Set<String> mutableVars, Map<String, Stmt.LocalArray> localArrays,
                  Map<String, Integer> paramIndex, boolean usesBarrier) {
        this.kernel = kernel;
        this.types = types;
        this.guards = guards;
        this.varTypes = Map.copyOf(varTypes);
        this.mutableVars = Set.copyOf(mutableVars);
        this.localArrays = Map.copyOf(localArrays);
        this.paramIndex = Map.copyOf(paramIndex);
        this.usesBarrier = usesBarrier;
    }

    /**
     * The launch checks of a kernel that passed {@link IrValidator} before, without checking it again: for a
     * compile cache whose entry was made from exactly this kernel (its key is the kernel's content, see
     * {@link IrDigest}) and holds the code rendered from it. It answers what
     * launches need ({@link #checkLaunch}, {@link #outOfRange}, {@link #guardId}, {@link #usesBarrier},
     * {@link #localArray}, {@link #paramIndex}); what rendering needs (types, guards, variables) it does not
     * have, and asking for it throws {@link IllegalStateException}: nothing can be rendered or interpreted
     * from a kernel that was not checked here.
     */
    public static CheckedKernel forLaunches(IrKernel kernel) {
        Map<String, Integer> params = new java.util.HashMap<>();
        for (int i = 0; i < kernel.params().size(); i++) {
            params.put(kernel.params().get(i).name(), i);
        }
        Map<String, Stmt.LocalArray> locals = new java.util.HashMap<>();
        boolean barrier = false;
        for (Stmt s : kernel.body()) {
            if (s instanceof Stmt.LocalArray la) {
                locals.put(la.name(), la);
            }
            barrier |= GroupPhases.containsBarrier(s);
        }
        return new CheckedKernel(kernel, null, null, Map.of(), Set.of(), locals, params, barrier);
    }

    /** False for {@link #forLaunches}: only launches can be checked, nothing rendered. */
    public boolean renderable() {
        return guards != null;
    }

    private void requireRenderable() {
        if (guards == null) {
            throw new IllegalStateException("kernel " + kernel.name() + " was loaded from the compile cache for launches"
                    + " only (expected: a kernel checked by IrValidator)");
        }
    }

    public IrKernel kernel() {
        return kernel;
    }

    public String name() {
        return kernel.name();
    }

    /** The type of an expression node of this kernel. */
    public IrType type(Expr e) {
        requireRenderable();
        IrType t = types.get(e);
        if (t == null) {
            throw new IllegalArgumentException("not an expression of kernel " + kernel.name() + ": " + e);
        }
        return t;
    }

    /** Whether a {@link Expr.Load}, {@link Stmt.Store} or indexed {@link Stmt.Accumulate} node needs a bounds guard. */
    public boolean guarded(Object access) {
        requireRenderable();
        return guards.getOrDefault(access, Boolean.FALSE);
    }

    /**
     * This kernel with every access guarded, proven or not: for benchmarks that measure what the
     * proofs save. Same semantics (a proven access never trips its guard), slower code.
     */
    public CheckedKernel withAllGuards() {
        requireRenderable();
        IdentityHashMap<Object, Boolean> all = new IdentityHashMap<>(guards);
        all.replaceAll((node, guarded) -> Boolean.TRUE);
        return new CheckedKernel(kernel, types, all, varTypes, mutableVars, localArrays, paramIndex, usesBarrier);
    }

    /** Accesses rendered with a guard. */
    public int guardsEmitted() {
        requireRenderable();
        return (int) guards.values().stream().filter(b -> b).count();
    }

    /** Accesses proven in bounds, rendered without a guard. */
    public int guardsElided() {
        requireRenderable();
        return (int) guards.values().stream().filter(b -> !b).count();
    }

    public IrType varType(String name) {
        requireRenderable();
        return varTypes.get(name);
    }

    public boolean isMutable(String name) {
        requireRenderable();
        return mutableVars.contains(name);
    }

    /** Every let and loop variable with its type. */
    public Map<String, IrType> varTypes() {
        requireRenderable();
        return varTypes;
    }

    public boolean usesBarrier() {
        return usesBarrier;
    }

    /** The local array named {@code name}, or null when it is a buffer parameter. */
    public Stmt.LocalArray localArray(String name) {
        return localArrays.get(name);
    }

    /** Position of a parameter in the signature. */
    public int paramIndex(String name) {
        Integer i = paramIndex.get(name);
        if (i == null) {
            throw new IllegalArgumentException("no parameter " + name);
        }
        return i;
    }

    public IrParam param(String name) {
        return kernel.params().get(paramIndex(name));
    }

    /** The element dtype of a buffer parameter or local array. */
    public DType elementDType(String array) {
        Stmt.LocalArray local = localArrays.get(array);
        return local != null ? local.dtype() : param(array).dtype();
    }

    /**
     * Checks what the proofs assumed about a launch, before it runs: the grid (exactly
     * {@code gridDims} dimensions, each at most {@link IrValidator#MAX_GLOBAL_SIZE}, divisible by
     * a declared local size), scalar bounds and buffers' declared minimum extents.
     *
     * @param extents element count of each buffer argument by parameter position (other entries unused)
     * @return the local size to run with: the declared one, {@code local}, or null
     * @throws ArraydException INVALID_ARGUMENT naming the argument
     */
    public long[] checkLaunch(long[] global, long[] local, List<KernelArg> args, long[] extents) {
        long[] values = new long[args.size()];
        boolean[] given = new boolean[args.size()];
        for (int i = 0; i < kernel.params().size() && i < args.size(); i++) {
            if (kernel.params().get(i) instanceof IrParam.Scalar && args.get(i) instanceof KernelArg.Scalar a) {
                values[i] = a.bits();
                given[i] = true;
            }
        }
        return checkLaunch(global, local, values, given, extents, LaunchGrid.Names.SPI, "args");
    }

    /**
     * {@link #checkLaunch(long[], long[], List, long[])} with the scalar arguments' values by parameter position
     * ({@code given[i]} when parameter {@code i}'s value is known), and the fields named as the caller's
     * request names them ({@code launch.global_dims}, {@code launch.args}).
     */
    public long[] checkLaunch(long[] global, long[] local, long[] values, boolean[] given, long[] extents,
            LaunchGrid.Names names, String argsField) {
        if (global.length != kernel.gridDims()) {
            throw ArraydException.invalid(names.global() + ": " + Quote.longs(global) + " (expected: " + kernel.gridDims()
                    + " dims, as kernel " + kernel.name() + " declares)");
        }
        for (int d = 0; d < global.length; d++) {
            if (global[d] > IrValidator.MAX_GLOBAL_SIZE) {
                throw ArraydException.invalid(names.global() + "[" + d + "]: " + global[d] + " (expected: at most "
                        + IrValidator.MAX_GLOBAL_SIZE + " for an IR kernel)");
            }
        }
        long[] effective = local;
        if (!kernel.localSize().isEmpty()) {
            long[] declared = kernel.localSize().stream().mapToLong(Long::longValue).toArray();
            if (local != null && local.length > 0 && !Arrays.equals(local, declared)) {
                throw ArraydException.invalid(names.local() + ": " + Quote.longs(local) + " (expected: none or "
                        + Quote.longs(declared) + ", the local size kernel " + kernel.name() + " declares)");
            }
            for (int d = 0; d < declared.length; d++) {
                if (global[d] % declared[d] != 0) {
                    throw ArraydException.invalid(names.global() + "[" + d + "]: " + global[d] + " (expected: a multiple of "
                            + declared[d] + ", the local size kernel " + kernel.name() + " declares)");
                }
            }
            effective = declared;
        }
        for (int i = 0; i < kernel.params().size() && i < values.length; i++) {
            if (kernel.params().get(i) instanceof IrParam.Scalar s && given[i]) {
                long v = values[i];
                if (s.min() != null && v < s.min()) {
                    throw ArraydException.invalid(argsField + "[" + i + "]: " + v + " for " + s.name() + " (expected: >= "
                            + s.min() + ", the declared min)");
                }
                if (s.max() != null && v > s.max()) {
                    throw ArraydException.invalid(argsField + "[" + i + "]: " + v + " for " + s.name() + " (expected: <= "
                            + s.max() + ", the declared max)");
                }
            }
        }
        for (int i = 0; i < kernel.params().size(); i++) {
            if (kernel.params().get(i) instanceof IrParam.Buffer b && b.minExtent() != null) {
                long need;
                try {
                    need = evalExtent(b.minExtent(), values, global);
                } catch (ArithmeticException e) {
                    throw ArraydException.invalid(argsField + "[" + i + "]: the min_extent of " + b.name()
                            + " overflows for these arguments (expected: a value below 2^63)");
                }
                if (extents[i] < need) {
                    throw ArraydException.invalid(argsField + "[" + i + "]: buffer of " + extents[i] + " elements for "
                            + b.name() + " (expected: at least " + need + ", its declared min_extent)");
                }
            }
        }
        return effective;
    }

    /**
     * The number a backend's guard records for an access of {@code array}: the parameter's position
     * for a buffer, the parameter count plus the local array's position for a local array.
     */
    public int guardId(String array) {
        Integer i = paramIndex.get(array);
        if (i != null) {
            return i;
        }
        int n = kernel.params().size();
        for (Stmt s : kernel.body()) {
            if (s instanceof Stmt.LocalArray la) {
                if (la.name().equals(array)) {
                    return n;
                }
                n++;
            }
        }
        throw new IllegalArgumentException("no array " + array);
    }

    /** The OUT_OF_RANGE failure of a launch whose guard {@code guardId} caught {@code index}. */
    public ArraydException outOfRange(int guardId, long index, long[] extents) {
        String what;
        if (guardId < kernel.params().size()) {
            IrParam p = kernel.params().get(guardId);
            what = "buffer " + p.name() + " (args[" + guardId + "], " + extents[guardId] + " elements)";
        } else {
            int n = kernel.params().size();
            Stmt.LocalArray found = null;
            for (Stmt s : kernel.body()) {
                if (s instanceof Stmt.LocalArray la && n++ == guardId) {
                    found = la;
                }
            }
            what = found == null ? "array #" + guardId : "local array " + found.name() + " (" + found.size() + " elements)";
        }
        return new ArraydException(ErrorCode.OUT_OF_RANGE, "kernel " + kernel.name() + ": index " + index + " of " + what
                + " is out of range; the access was skipped (the first one caught; others may have been skipped too),"
                + " nothing outside the kernel's buffers was touched");
    }

    private long evalExtent(Expr e, long[] values, long[] global) {
        return switch (e) {
            case Expr.Const c -> c.bits();
            case Expr.Param p -> values[paramIndex(p.name())];
            case Expr.Builtin b when b.kind() == Expr.Builtin.Kind.GLOBAL_SIZE -> global[b.dim()];
            case Expr.Cast c -> evalExtent(c.operand(), values, global);
            case Expr.Binary b -> switch (b.op()) {
                case ADD -> Math.addExact(evalExtent(b.left(), values, global), evalExtent(b.right(), values, global));
                case SUB -> Math.subtractExact(evalExtent(b.left(), values, global), evalExtent(b.right(), values, global));
                case MUL -> Math.multiplyExact(evalExtent(b.left(), values, global), evalExtent(b.right(), values, global));
                default -> throw new IllegalStateException("validated min_extent has " + b.op());
            };
            default -> throw new IllegalStateException("validated min_extent has " + e);
        };
    }
}
