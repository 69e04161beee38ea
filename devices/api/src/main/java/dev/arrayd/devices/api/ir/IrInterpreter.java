package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;

/**
 * The reference semantics of the IR, in plain Java: what every backend's rendering must compute.
 * Slow and obvious on purpose; tests run kernels here and on a backend and compare.
 *
 * <p>Values travel as {@code long} bits: 0 / 1 for bool, the value for integers (u8 as 0..255, i32
 * sign-extended), raw IEEE bits for f32 (low 32 bits) and f64. Arithmetic follows the IR reference
 * (docs/kernels.md): integers wrap, division by zero gives 0, float min / max ignore a NaN operand,
 * float-to-integer casts saturate. Work-items run one after another; with barriers, the items of a
 * group run as virtual threads meeting at a {@link CyclicBarrier}. A guarded access out of range
 * skips the store (a load yields 0), and the run ends with OUT_OF_RANGE, like on a device. An
 * unguarded access out of range means the range analysis proved something false: that throws
 * {@link IllegalStateException}, which the differential tests would report.
 */
public final class IrInterpreter {

    private static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final CheckedKernel kernel;
    private final long[] global = {1, 1, 1};
    private final long[] local = {1, 1, 1};
    private final Object[] args; // MemorySegment for buffers, Long bits for scalars
    private final Map<String, MemorySegment> arrays = new HashMap<>();
    private long guardHit = -1;
    private long guardIndex;

    private IrInterpreter(CheckedKernel kernel, long[] global, long[] local, List<Object> args) {
        this.kernel = kernel;
        for (int d = 0; d < global.length; d++) {
            this.global[d] = global[d];
            this.local[d] = local == null ? 1 : local[d];
        }
        this.args = args.toArray();
        List<IrParam> params = kernel.kernel().params();
        for (int i = 0; i < params.size(); i++) {
            if (params.get(i) instanceof IrParam.Buffer b) {
                arrays.put(b.name(), (MemorySegment) this.args[i]);
            }
        }
    }

    /**
     * Runs {@code kernel} over the grid. {@code args} holds a {@link MemorySegment} (little-endian
     * elements) per buffer parameter and a {@link KernelArg.Scalar} per scalar.
     *
     * @throws ArraydException INVALID_ARGUMENT when the launch breaks what the kernel declares;
     *                         OUT_OF_RANGE when a guarded access was out of range
     */
    public static void run(CheckedKernel kernel, long[] global, long[] local, List<Object> args) {
        List<IrParam> params = kernel.kernel().params();
        long[] extents = new long[params.size()];
        List<KernelArg> launchArgs = new ArrayList<>();
        List<Object> values = new ArrayList<>();
        for (int i = 0; i < params.size(); i++) {
            Object a = args.get(i);
            if (params.get(i) instanceof IrParam.Buffer b) {
                MemorySegment m = (MemorySegment) a;
                extents[i] = m.byteSize() / b.dtype().byteSize();
                launchArgs.add(new KernelArg.Buffer(null));
                values.add(m);
            } else {
                KernelArg.Scalar s = (KernelArg.Scalar) a;
                launchArgs.add(s);
                values.add(s.dtype() == DType.I32 ? (long) (int) s.bits() : s.bits());
            }
        }
        long[] effectiveLocal = kernel.checkLaunch(global, local, launchArgs, extents);
        IrInterpreter in = new IrInterpreter(kernel, global, effectiveLocal, values);
        in.runGrid();
        if (in.guardHit >= 0) {
            throw kernel.outOfRange((int) in.guardHit, in.guardIndex, extents);
        }
    }

    private void runGrid() {
        long[] groups = new long[3];
        for (int d = 0; d < 3; d++) {
            groups[d] = global[d] / local[d];
        }
        for (long gz = 0; gz < groups[2]; gz++) {
            for (long gy = 0; gy < groups[1]; gy++) {
                for (long gx = 0; gx < groups[0]; gx++) {
                    runGroup(new long[] {gx, gy, gz});
                }
            }
        }
    }

    private void runGroup(long[] group) {
        Map<String, MemorySegment> shared = new HashMap<>();
        for (Stmt s : kernel.kernel().body()) {
            if (s instanceof Stmt.LocalArray la) {
                shared.put(la.name(), MemorySegment.ofArray(new byte[(int) (la.size() * la.dtype().byteSize())]));
            }
        }
        int items = (int) (local[0] * local[1] * local[2]);
        List<Item> all = new ArrayList<>(items);
        for (long z = 0; z < local[2]; z++) {
            for (long y = 0; y < local[1]; y++) {
                for (long x = 0; x < local[0]; x++) {
                    all.add(new Item(new long[] {x, y, z}, group, shared));
                }
            }
        }
        if (!kernel.usesBarrier()) {
            for (Item item : all) {
                item.block(kernel.kernel().body());
            }
            return;
        }
        CyclicBarrier barrier = new CyclicBarrier(items);
        List<Thread> threads = new ArrayList<>(items);
        Throwable[] failure = new Throwable[1];
        for (Item item : all) {
            item.barrier = barrier;
            threads.add(Thread.ofVirtual().start(() -> {
                try {
                    item.block(kernel.kernel().body());
                } catch (Throwable t) {
                    synchronized (failure) {
                        failure[0] = t;
                    }
                    barrier.reset();
                }
            }));
        }
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ArraydException(ErrorCode.CANCELLED, "interrupted while interpreting " + kernel.name());
            }
        }
        if (failure[0] instanceof RuntimeException r) {
            throw r;
        } else if (failure[0] != null) {
            throw new IllegalStateException(failure[0]);
        }
    }

    private synchronized void hit(String array, long index) {
        if (guardHit < 0) {
            guardHit = kernel.guardId(array);
            guardIndex = index;
        }
    }

    /** One work-item's state. */
    private final class Item {
        final long[] lid;
        final long[] group;
        final Map<String, MemorySegment> shared;
        final Map<String, Long> vars = new HashMap<>();
        CyclicBarrier barrier;

        Item(long[] lid, long[] group, Map<String, MemorySegment> shared) {
            this.lid = lid;
            this.group = group;
            this.shared = shared;
        }

        void block(List<Stmt> body) {
            for (Stmt s : body) {
                stmt(s);
            }
        }

        void stmt(Stmt s) {
            switch (s) {
                case Stmt.Let let -> vars.put(let.name(), eval(let.value()));
                case Stmt.Assign a -> vars.put(a.name(), eval(a.value()));
                case Stmt.Store st -> {
                    long idx = eval(st.index());
                    long v = eval(st.value());
                    if (inBounds(st, st.array(), idx)) {
                        store(st.array(), idx, v);
                    }
                }
                case Stmt.Accumulate acc -> {
                    if (acc.index() == null) {
                        IrType t = kernel.varType(acc.target());
                        vars.put(acc.target(), accumulate(acc.op(), t, vars.get(acc.target()), eval(acc.value())));
                    } else {
                        long idx = eval(acc.index());
                        long v = eval(acc.value());
                        if (inBounds(acc, acc.target(), idx)) {
                            IrType t = IrType.ofElement(kernel.elementDType(acc.target()));
                            store(acc.target(), idx, accumulate(acc.op(), t, load(acc.target(), idx), v));
                        }
                    }
                }
                case Stmt.If branch -> block(eval(branch.condition()) != 0 ? branch.thenBody() : branch.elseBody());
                case Stmt.For loop -> {
                    long end = eval(loop.end());
                    // validation keeps end + step within the type: the counter never wraps
                    for (long i = eval(loop.start()); i < end; i += loop.step()) {
                        vars.put(loop.var(), i);
                        block(loop.body());
                    }
                }
                case Stmt.LocalArray la -> { }
                case Stmt.Barrier b -> {
                    try {
                        barrier.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(e);
                    } catch (BrokenBarrierException e) {
                        throw new IllegalStateException("another work-item of the group failed", e);
                    }
                }
            }
        }

        private boolean inBounds(Object node, String array, long idx) {
            long extent = segment(array).byteSize() / kernel.elementDType(array).byteSize();
            if (idx >= 0 && idx < extent) {
                return true;
            }
            if (!kernel.guarded(node)) {
                throw new IllegalStateException("kernel " + kernel.name() + ": index " + idx + " of " + array + " ("
                        + extent + " elements) is out of range, but the range analysis proved this access in bounds");
            }
            hit(array, idx);
            return false;
        }

        MemorySegment segment(String array) {
            MemorySegment m = shared.get(array);
            return m != null ? m : arrays.get(array);
        }

        long load(String array, long idx) {
            MemorySegment m = segment(array);
            DType d = kernel.elementDType(array);
            long off = idx * d.byteSize();
            return switch (d) {
                case F32 -> m.get(LE_INT, off) & 0xffff_ffffL;
                case F64, I64 -> m.get(LE_LONG, off);
                case I32 -> m.get(LE_INT, off);
                case U8 -> m.get(ValueLayout.JAVA_BYTE, off) & 0xff;
                case F16 -> Ops.f32(Half.f16ToF32(m.get(LE_SHORT, off)));
                case BF16 -> Ops.f32(Half.bf16ToF32(m.get(LE_SHORT, off)));
            };
        }

        void store(String array, long idx, long v) {
            MemorySegment m = segment(array);
            DType d = kernel.elementDType(array);
            long off = idx * d.byteSize();
            switch (d) {
                case F32, I32 -> m.set(LE_INT, off, (int) v);
                case F64, I64 -> m.set(LE_LONG, off, v);
                case U8 -> m.set(ValueLayout.JAVA_BYTE, off, (byte) v);
                case F16 -> m.set(LE_SHORT, off, Half.f32ToF16(Ops.asF32(v)));
                case BF16 -> m.set(LE_SHORT, off, Half.f32ToBf16(Ops.asF32(v)));
            }
        }

        long accumulate(Stmt.Accumulate.Op op, IrType t, long old, long v) {
            return switch (op) {
                case ADD -> Ops.binary(Expr.Binary.Op.ADD, t, old, v);
                case MAX -> Ops.binary(Expr.Binary.Op.MAX, t, old, v);
                case MIN -> Ops.binary(Expr.Binary.Op.MIN, t, old, v);
            };
        }

        long eval(Expr e) {
            return switch (e) {
                case Expr.Const c -> c.bits();
                case Expr.Param p -> (Long) args[kernel.paramIndex(p.name())];
                case Expr.Var v -> vars.get(v.name());
                case Expr.Builtin b -> {
                    int d = b.dim();
                    yield switch (b.kind()) {
                        case GLOBAL_ID -> group[d] * local[d] + lid[d];
                        case GLOBAL_SIZE -> global[d];
                        case LOCAL_ID -> lid[d];
                        case LOCAL_SIZE -> local[d];
                        case GROUP_ID -> group[d];
                        case NUM_GROUPS -> global[d] / local[d];
                    };
                }
                case Expr.Load l -> {
                    long idx = eval(l.index());
                    yield inBounds(l, l.array(), idx) ? load(l.array(), idx) : 0;
                }
                case Expr.Unary u -> Ops.unary(u.op(), kernel.type(u.operand()), eval(u.operand()));
                case Expr.Binary b -> {
                    long left = eval(b.left());
                    if (b.op() == Expr.Binary.Op.LOGICAL_AND) {
                        yield left != 0 ? eval(b.right()) : 0;
                    }
                    if (b.op() == Expr.Binary.Op.LOGICAL_OR) {
                        yield left != 0 ? 1 : eval(b.right());
                    }
                    yield Ops.binary(b.op(), kernel.type(b.left()), left, eval(b.right()));
                }
                case Expr.Select x -> eval(x.condition()) != 0 ? eval(x.ifTrue()) : eval(x.ifFalse());
                case Expr.Cast c -> Ops.cast(kernel.type(c.operand()), c.to(), eval(c.operand()));
                case Expr.Fma f -> kernel.type(f) == IrType.F32
                        ? Ops.f32(Math.fma(Ops.asF32(eval(f.a())), Ops.asF32(eval(f.b())), Ops.asF32(eval(f.c()))))
                        : Ops.f64(Math.fma(Ops.asF64(eval(f.a())), Ops.asF64(eval(f.b())), Ops.asF64(eval(f.c()))));
            };
        }
    }
}
