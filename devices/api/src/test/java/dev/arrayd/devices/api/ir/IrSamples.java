package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;

import java.util.List;

import static dev.arrayd.devices.api.ir.IrDsl.*;

/** Kernels the IR tests share: their rendered forms are the golden files. */
public final class IrSamples {

    private IrSamples() {}

    /** y[i] = a * x[i] + y[i] for i < n, with x and y declared to hold at least n elements. */
    public static IrKernel saxpy() {
        return new IrKernel("saxpy", List.of(
                new IrParam.Scalar("a", DType.F32, null, null),
                new IrParam.Buffer("x", DType.F32, Access.READ, param("n")),
                new IrParam.Buffer("y", DType.F32, Access.READ_WRITE, param("n")),
                new IrParam.Scalar("n", DType.I64, 0L, 1L << 40)),
                1, List.of(), List.of(
                let("i", gid(0)),
                when(lt(var("i"), param("n")),
                        store("y", var("i"), add(mul(param("a"), load("x", var("i"))), load("y", var("i")))))));
    }

    /** out[i] = in[2 i] with no declared extents: both accesses keep their guards. */
    public static IrKernel gatherUnchecked() {
        return new IrKernel("gather", List.of(
                new IrParam.Buffer("in", DType.I32, Access.READ, null),
                new IrParam.Buffer("out", DType.I32, Access.WRITE, null)),
                1, List.of(), List.of(
                store("out", gid(0), load("in", mul(gid(0), i64(2))))));
    }

    /** c = a (m x k) * b (k x n), f32, one work-item per element of c, everything proven in bounds. */
    public static IrKernel matmul() {
        Expr m = cast(IrType.I64, param("m"));
        Expr n = cast(IrType.I64, param("n"));
        Expr k = cast(IrType.I64, param("k"));
        return new IrKernel("matmul", List.of(
                new IrParam.Buffer("a", DType.F32, Access.READ, mul(m, k)),
                new IrParam.Buffer("b", DType.F32, Access.READ, mul(k, n)),
                new IrParam.Buffer("c", DType.F32, Access.WRITE, mul(m, n)),
                new IrParam.Scalar("m", DType.I32, 0L, 65536L),
                new IrParam.Scalar("n", DType.I32, 0L, 65536L),
                new IrParam.Scalar("k", DType.I32, 0L, 65536L)),
                2, List.of(), List.of(
                let("row", gid(1)),
                let("col", gid(0)),
                when(and(lt(var("row"), m), lt(var("col"), n)),
                        mut("acc", f32(0)),
                        loop("kk", i64(0), k,
                                accVar("acc", Stmt.Accumulate.Op.ADD,
                                        mul(load("a", add(mul(var("row"), k), var("kk"))),
                                                load("b", add(mul(var("kk"), n), var("col")))))),
                        store("c", add(mul(var("row"), n), var("col")), var("acc")))));
    }

    /** Per-group sum of 256 f32 with a local array and barriers: partial[g] = sum of x[g*256 .. g*256+255]. */
    public static IrKernel groupSum() {
        return new IrKernel("group_sum", List.of(
                new IrParam.Buffer("x", DType.F32, Access.READ, null),
                new IrParam.Buffer("partial", DType.F32, Access.WRITE, null)),
                1, List.of(256L), List.of(
                new Stmt.LocalArray("tile", DType.F32, 256),
                store("tile", lid(0), load("x", gid(0))),
                new Stmt.Barrier(),
                loop("level", i32(0), i32(8),
                        let("stride", bin(Expr.Binary.Op.SHR, i64(128), cast(IrType.I64, var("level")))),
                        when(lt(lid(0), var("stride")),
                                new Stmt.Accumulate("tile", lid(0), Stmt.Accumulate.Op.ADD,
                                        load("tile", add(lid(0), var("stride"))))),
                        new Stmt.Barrier()),
                when(bin(Expr.Binary.Op.EQ, lid(0), i64(0)), store("partial", group(0), load("tile", i64(0))))));
    }
}
