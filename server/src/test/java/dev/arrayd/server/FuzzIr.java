package dev.arrayd.server;

import dev.arrayd.proto.v1.CompileRequest;
import dev.arrayd.proto.v1.Dialect;
import dev.arrayd.proto.v1.IrAccumulate;
import dev.arrayd.proto.v1.IrAssign;
import dev.arrayd.proto.v1.IrBarrier;
import dev.arrayd.proto.v1.IrBinary;
import dev.arrayd.proto.v1.IrBufferParam;
import dev.arrayd.proto.v1.IrBuiltin;
import dev.arrayd.proto.v1.IrCast;
import dev.arrayd.proto.v1.IrConst;
import dev.arrayd.proto.v1.IrExpr;
import dev.arrayd.proto.v1.IrFma;
import dev.arrayd.proto.v1.IrFor;
import dev.arrayd.proto.v1.IrIf;
import dev.arrayd.proto.v1.IrKernel;
import dev.arrayd.proto.v1.IrLet;
import dev.arrayd.proto.v1.IrLoad;
import dev.arrayd.proto.v1.IrLocalArray;
import dev.arrayd.proto.v1.IrModule;
import dev.arrayd.proto.v1.IrParam;
import dev.arrayd.proto.v1.IrScalarParam;
import dev.arrayd.proto.v1.IrSelect;
import dev.arrayd.proto.v1.IrStmt;
import dev.arrayd.proto.v1.IrStore;
import dev.arrayd.proto.v1.IrUnary;
import dev.arrayd.proto.v1.KernelModuleSource;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;

/**
 * Hostile IR for {@code KernelService.Compile} (used by the in-process and the process fuzz tests): trees with a oneof left unset at any depth, operands missing,
 * enum values left at 0 or set to numbers the protos do not define, casts to storage-only types, unsigned
 * fields at 2^31, 2^32 - 1, 2^63 and 2^64 - 1, names of 100 kB, and nesting around and far past the daemon's
 * limits (expression chains of 255 to 600 levels). Most of it is ill-formed and refused at once; what is well
 * formed compiles (kernel and parameter names come from a small set, so the compile cache absorbs repeats).
 *
 * <p>Trees are built from a seeded {@link Random}, so that jqwik reports a failing request by its seed.
 */
public final class FuzzIr {

    private FuzzIr() {}

    private static final String HUGE_NAME = "n".repeat(100_000);
    private static final String[] NAMES = {"i", "x", "y", "n", "k", "acc", "tmp", "", "1bad", "__x", "arrayd_x"};
    private static final int[] DEEP = {64, 200, 255, 256, 257, 300, 600};

    /**
     * Compile requests of one IR module each (sometimes with another dialect, or no IR), naming {@code session}.
     */
    public static Arbitrary<CompileRequest> compiles(String session) {
        return Arbitraries.longs().map(seed -> compile(new Random(seed), session));
    }

    static CompileRequest compile(Random r, String session) {
        KernelModuleSource.Builder m = KernelModuleSource.newBuilder()
                .setDialectValue(r.nextInt(12) == 0 ? r.nextInt(8) : Dialect.DIALECT_IR_VALUE);
        IrModule.Builder ir = IrModule.newBuilder();
        int kernels = r.nextInt(8) == 0 ? 0 : 1 + r.nextInt(2);
        for (int k = 0; k < kernels; k++) {
            ir.addKernels(kernel(r));
        }
        if (r.nextInt(10) != 0) {
            m.setIr(ir);
        }
        return CompileRequest.newBuilder().setSession(session).addModules(m).build();
    }

    static IrKernel kernel(Random r) {
        IrKernel.Builder k = IrKernel.newBuilder().setName(kernelName(r)).setGridDims(u32(r, 1, 3));
        int params = r.nextInt(4);
        for (int p = 0; p < params; p++) {
            k.addParams(param(r));
        }
        if (r.nextInt(6) == 0) {
            k.addLocalSize(u64(r, 1, 64));
        }
        int stmts = r.nextInt(4);
        for (int s = 0; s < stmts; s++) {
            k.addBody(r.nextInt(25) == 0 ? deep(r) : stmt(r, 3));
        }
        return k.build();
    }

    private static String kernelName(Random r) {
        return switch (r.nextInt(40)) {
            case 0 -> HUGE_NAME;
            case 1 -> "";
            case 2 -> "k" + r.nextInt(1000);
            case 3 -> "kérnel";
            default -> "k";
        };
    }

    private static String name(Random r) {
        return r.nextInt(500) == 0 ? HUGE_NAME : NAMES[r.nextInt(NAMES.length)];
    }

    private static IrParam param(Random r) {
        IrParam.Builder p = IrParam.newBuilder().setName(name(r));
        switch (r.nextInt(7)) {
            case 0 -> { } // neither buffer nor scalar
            case 1, 2, 3 -> {
                IrBufferParam.Builder b = IrBufferParam.newBuilder().setDtypeValue(enumValue(r, 7))
                        .setAccessValue(enumValue(r, 3));
                if (r.nextInt(4) == 0) {
                    b.setMinExtent(expr(r, 2));
                }
                p.setBuffer(b);
            }
            default -> {
                IrScalarParam.Builder s = IrScalarParam.newBuilder().setDtypeValue(enumValue(r, 7));
                if (r.nextBoolean()) {
                    s.setMin(edge64(r));
                }
                if (r.nextBoolean()) {
                    s.setMax(edge64(r));
                }
                p.setScalar(s);
            }
        }
        return p.build();
    }

    /** A statement {@code let v = ((e + e) + e) + ...}, {@code levels} deep: around and past the nesting limits. */
    private static IrStmt deep(Random r) {
        int levels = DEEP[r.nextInt(DEEP.length)];
        IrExpr e = leaf(r);
        for (int i = 1; i < levels; i++) {
            e = IrExpr.newBuilder().setBinary(IrBinary.newBuilder().setOp(IrBinary.Op.OP_ADD).setLeft(e)
                    .setRight(leaf(r))).build();
        }
        return IrStmt.newBuilder().setLet(IrLet.newBuilder().setName("deep").setValue(e)).build();
    }

    static IrStmt stmt(Random r, int depth) {
        IrStmt.Builder s = IrStmt.newBuilder();
        switch (r.nextInt(depth <= 0 ? 5 : 10)) {
            case 0 -> { } // no kind set
            case 1 -> {
                IrLet.Builder l = IrLet.newBuilder().setName(name(r)).setMutable(r.nextBoolean());
                if (maybe(r)) {
                    l.setValue(expr(r, depth));
                }
                s.setLet(l);
            }
            case 2 -> s.setStore(IrStore.newBuilder().setArray(name(r)).setIndex(expr(r, depth)).setValue(expr(r, depth)));
            case 3 -> s.setBarrier(IrBarrier.getDefaultInstance());
            case 4 -> s.setLocalArray(IrLocalArray.newBuilder().setName(name(r)).setDtypeValue(enumValue(r, 7))
                    .setSize(u64(r, 1, 1024)));
            case 5 -> s.setAssign(IrAssign.newBuilder().setName(name(r)).setValue(expr(r, depth)));
            case 6 -> {
                IrAccumulate.Builder a = IrAccumulate.newBuilder().setTarget(name(r)).setOpValue(enumValue(r, 3));
                if (maybe(r)) {
                    a.setIndex(expr(r, depth));
                }
                if (maybe(r)) {
                    a.setValue(expr(r, depth));
                }
                s.setAccumulate(a);
            }
            case 7 -> {
                IrIf.Builder b = IrIf.newBuilder();
                if (maybe(r)) {
                    b.setCondition(expr(r, depth - 1));
                }
                for (int i = r.nextInt(3); i > 0; i--) {
                    b.addThenBody(stmt(r, depth - 1));
                }
                for (int i = r.nextInt(2); i > 0; i--) {
                    b.addElseBody(stmt(r, depth - 1));
                }
                s.setBranch(b);
            }
            default -> {
                IrFor.Builder f = IrFor.newBuilder().setVar(name(r)).setStep(switch (r.nextInt(6)) {
                    case 0 -> -1;
                    case 1 -> Long.MIN_VALUE;
                    case 2 -> 0;
                    default -> 1 + r.nextInt(4);
                });
                if (maybe(r)) {
                    f.setStart(expr(r, depth - 1));
                }
                if (maybe(r)) {
                    f.setEnd(expr(r, depth - 1));
                }
                for (int i = r.nextInt(3); i > 0; i--) {
                    f.addBody(stmt(r, depth - 1));
                }
                s.setLoop(f);
            }
        }
        return s.build();
    }

    static IrExpr expr(Random r, int depth) {
        if (depth <= 0 || r.nextInt(3) == 0) {
            return leaf(r);
        }
        IrExpr.Builder e = IrExpr.newBuilder();
        switch (r.nextInt(7)) {
            case 0 -> {
                IrUnary.Builder u = IrUnary.newBuilder().setOpValue(enumValue(r, 9));
                if (maybe(r)) {
                    u.setOperand(expr(r, depth - 1));
                }
                e.setUnary(u);
            }
            case 1, 2 -> {
                IrBinary.Builder b = IrBinary.newBuilder().setOpValue(enumValue(r, 21));
                if (maybe(r)) {
                    b.setLeft(expr(r, depth - 1));
                }
                if (maybe(r)) {
                    b.setRight(expr(r, depth - 1));
                }
                e.setBinary(b);
            }
            case 3 -> e.setSelect(IrSelect.newBuilder().setCondition(expr(r, depth - 1)).setIfTrue(expr(r, depth - 1))
                    .setIfFalse(expr(r, depth - 1)));
            case 4 -> {
                IrCast.Builder c = IrCast.newBuilder().setDtypeValue(enumValue(r, 7)).setToBool(r.nextInt(4) == 0);
                if (maybe(r)) {
                    c.setOperand(expr(r, depth - 1));
                }
                e.setCast(c);
            }
            case 5 -> e.setFma(IrFma.newBuilder().setA(expr(r, depth - 1)).setB(expr(r, depth - 1)));
            default -> {
                IrLoad.Builder l = IrLoad.newBuilder().setArray(name(r));
                if (maybe(r)) {
                    l.setIndex(expr(r, depth - 1));
                }
                e.setLoad(l);
            }
        }
        return e.build();
    }

    static IrExpr leaf(Random r) {
        IrExpr.Builder e = IrExpr.newBuilder();
        switch (r.nextInt(12)) {
            case 0 -> { } // no kind set
            case 1 -> e.setConstant(IrConst.getDefaultInstance()); // no value set
            case 2 -> e.setConstant(IrConst.newBuilder().setU8(u32(r, 0, 255)));
            case 3 -> e.setConstant(IrConst.newBuilder().setI64(edge64(r)));
            case 4 -> e.setConstant(IrConst.newBuilder().setBool(r.nextBoolean()));
            case 5 -> e.setConstant(IrConst.newBuilder().setF64(r.nextDouble()));
            case 6 -> e.setParam(name(r));
            case 7 -> e.setVar(name(r));
            case 8, 9 -> e.setBuiltin(IrBuiltin.newBuilder().setKindValue(enumValue(r, 6)).setDim(u32(r, 0, 2)));
            default -> e.setConstant(IrConst.newBuilder().setI32(r.nextInt(5) - 2));
        }
        return e.build();
    }

    private static boolean maybe(Random r) {
        return r.nextInt(10) != 0;
    }

    /** An enum number: mostly one of {@code 1..max}, sometimes 0 (unset), a number past the last, or negative. */
    private static int enumValue(Random r, int max) {
        return switch (r.nextInt(12)) {
            case 0 -> 0;
            case 1 -> max + 1 + r.nextInt(100);
            case 2 -> -1 - r.nextInt(3);
            default -> 1 + r.nextInt(max);
        };
    }

    /** A uint32 wire value: mostly in {@code lo..hi}, sometimes 2^31, 2^32 - 1 or just past {@code hi}. */
    static int u32(Random r, int lo, int hi) {
        return switch (r.nextInt(10)) {
            case 0 -> Integer.MIN_VALUE; // 2^31
            case 1 -> -1; // 2^32 - 1
            case 2 -> hi + 1;
            default -> lo + r.nextInt(hi - lo + 1);
        };
    }

    /** A uint64 wire value: mostly in {@code lo..hi}, sometimes 2^31, 2^32, 2^63 or 2^64 - 1. */
    static long u64(Random r, long lo, long hi) {
        return switch (r.nextInt(10)) {
            case 0 -> 1L << 31;
            case 1 -> 1L << 32;
            case 2 -> Long.MIN_VALUE; // 2^63
            case 3 -> -1L; // 2^64 - 1
            default -> lo + (long) r.nextInt((int) (hi - lo + 1));
        };
    }

    /** An int64: small, or at the edges of 32 and 64 bits. */
    static long edge64(Random r) {
        return switch (r.nextInt(8)) {
            case 0 -> Long.MIN_VALUE;
            case 1 -> Long.MAX_VALUE;
            case 2 -> Integer.MAX_VALUE + 1L;
            case 3 -> -1;
            default -> r.nextInt(64);
        };
    }
}
