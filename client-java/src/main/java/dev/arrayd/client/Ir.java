package dev.arrayd.client;

import dev.arrayd.proto.v1.IrBuiltin;
import dev.arrayd.proto.v1.IrConst;
import dev.arrayd.proto.v1.IrFma;
import dev.arrayd.proto.v1.IrLoad;
import dev.arrayd.proto.v1.IrSelect;

/**
 * Leaves and kernels of arrayd's portable kernel IR (reference: docs/kernels.md). saxpy:
 *
 * <pre>{@code
 * IrKernelSpec saxpy = Ir.kernel("saxpy")
 *         .scalar("a", DType.F32)
 *         .buffer("x", DType.F32, Access.READ, Ir.param("n"))        // at least n elements
 *         .buffer("y", DType.F32, Access.READ_WRITE, Ir.param("n"))
 *         .scalar("n", DType.I64, 0, 1L << 40)
 *         .body(b -> {
 *             IrExpr i = b.let("i", Ir.globalId(0));
 *             b.when(i.lt(Ir.param("n")), then ->
 *                     then.store("y", i, Ir.param("a").mul(Ir.load("x", i)).add(Ir.load("y", i))));
 *         });
 * }</pre>
 * The daemon proves {@code x[i]} and {@code y[i]} in bounds ({@code i < n <= extent}), so the rendered
 * loop has no guard.
 */
public final class Ir {

    private Ir() {}

    /** Starts a kernel named {@code name} (a C identifier) over a 1-D grid. */
    public static IrKernelBuilder kernel(String name) {
        return new IrKernelBuilder(name);
    }

    private static IrExpr constant(IrConst.Builder c) {
        return new IrExpr(dev.arrayd.proto.v1.IrExpr.newBuilder().setConstant(c).build());
    }

    /** An i32 constant. */
    public static IrExpr i32(int v) {
        return constant(IrConst.newBuilder().setI32(v));
    }

    /** An i64 constant. */
    public static IrExpr i64(long v) {
        return constant(IrConst.newBuilder().setI64(v));
    }

    public static IrExpr u8(int v) {
        return constant(IrConst.newBuilder().setU8(v));
    }

    public static IrExpr f32(float v) {
        return constant(IrConst.newBuilder().setF32(v));
    }

    public static IrExpr f64(double v) {
        return constant(IrConst.newBuilder().setF64(v));
    }

    public static IrExpr bool(boolean v) {
        return constant(IrConst.newBuilder().setBool(v));
    }

    /** A scalar parameter's value. */
    public static IrExpr param(String name) {
        return new IrExpr(dev.arrayd.proto.v1.IrExpr.newBuilder().setParam(name).build());
    }

    /** A variable (let or loop variable) by name; {@link IrBlock#let} returns it already. */
    public static IrExpr var(String name) {
        return new IrExpr(dev.arrayd.proto.v1.IrExpr.newBuilder().setVar(name).build());
    }

    /** {@code array[index]}, a buffer parameter or local array. */
    public static IrExpr load(String array, IrExpr index) {
        return new IrExpr(dev.arrayd.proto.v1.IrExpr.newBuilder()
                .setLoad(IrLoad.newBuilder().setArray(array).setIndex(index.toProto())).build());
    }

    public static IrExpr select(IrExpr condition, IrExpr ifTrue, IrExpr ifFalse) {
        return new IrExpr(dev.arrayd.proto.v1.IrExpr.newBuilder().setSelect(IrSelect.newBuilder()
                .setCondition(condition.toProto()).setIfTrue(ifTrue.toProto()).setIfFalse(ifFalse.toProto())).build());
    }

    /** {@code a * b + c}, rounded once. */
    public static IrExpr fma(IrExpr a, IrExpr b, IrExpr c) {
        return new IrExpr(dev.arrayd.proto.v1.IrExpr.newBuilder()
                .setFma(IrFma.newBuilder().setA(a.toProto()).setB(b.toProto()).setC(c.toProto())).build());
    }

    private static IrExpr builtin(IrBuiltin.Kind kind, int dim) {
        return new IrExpr(dev.arrayd.proto.v1.IrExpr.newBuilder()
                .setBuiltin(IrBuiltin.newBuilder().setKind(kind).setDim(dim)).build());
    }

    /** The work-item's global id in {@code dim} (i64). */
    public static IrExpr globalId(int dim) {
        return builtin(IrBuiltin.Kind.KIND_GLOBAL_ID, dim);
    }

    public static IrExpr globalSize(int dim) {
        return builtin(IrBuiltin.Kind.KIND_GLOBAL_SIZE, dim);
    }

    public static IrExpr localId(int dim) {
        return builtin(IrBuiltin.Kind.KIND_LOCAL_ID, dim);
    }

    public static IrExpr localSize(int dim) {
        return builtin(IrBuiltin.Kind.KIND_LOCAL_SIZE, dim);
    }

    public static IrExpr groupId(int dim) {
        return builtin(IrBuiltin.Kind.KIND_GROUP_ID, dim);
    }

    public static IrExpr numGroups(int dim) {
        return builtin(IrBuiltin.Kind.KIND_NUM_GROUPS, dim);
    }
}
