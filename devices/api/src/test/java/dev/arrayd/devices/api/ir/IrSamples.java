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

    /** c (m x n) = a (m x k) * b (k x n), f32, m, n and k i32 scalars; {@code m}, {@code n}, {@code k} as i64. */
    private static List<IrParam> matmulParams(Expr m, Expr n, Expr k) {
        return List.of(
                new IrParam.Buffer("a", DType.F32, Access.READ, mul(m, k)),
                new IrParam.Buffer("b", DType.F32, Access.READ, mul(k, n)),
                new IrParam.Buffer("c", DType.F32, Access.WRITE, mul(m, n)),
                new IrParam.Scalar("m", DType.I32, 0L, 65536L),
                new IrParam.Scalar("n", DType.I32, 0L, 65536L),
                new IrParam.Scalar("k", DType.I32, 0L, 65536L));
    }

    /** c = a (m x k) * b (k x n), f32, one work-item per element of c, everything proven in bounds. */
    public static IrKernel matmul() {
        Expr m = cast(IrType.I64, param("m"));
        Expr n = cast(IrType.I64, param("n"));
        Expr k = cast(IrType.I64, param("k"));
        return new IrKernel("matmul", matmulParams(m, n, k),
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

    /**
     * c = a (m x k) * b (k x n) with a {@code rows x cols} block of c per work-item (the grid is n/cols x m/rows):
     * b is read at {@code cols * global_id(0) + j}, a constant stride across neighbouring work-items.
     */
    public static IrKernel blockMatmul(int rows, int cols) {
        Expr m = cast(IrType.I64, param("m"));
        Expr n = cast(IrType.I64, param("n"));
        Expr k = cast(IrType.I64, param("k"));
        List<Stmt> body = new java.util.ArrayList<>(List.of(let("row", mul(gid(1), i64(rows))), let("col", mul(gid(0), i64(cols)))));
        List<Stmt> step = new java.util.ArrayList<>();
        List<Stmt> stores = new java.util.ArrayList<>();
        for (int r = 0; r < rows; r++) {
            step.add(let("a" + r, load("a", add(mul(add(var("row"), i64(r)), k), var("p")))));
            for (int j = 0; j < cols; j++) {
                body.add(mut("c" + r + "_" + j, f32(0)));
                stores.add(store("c", add(mul(add(var("row"), i64(r)), n), add(var("col"), i64(j))), var("c" + r + "_" + j)));
            }
        }
        for (int j = 0; j < cols; j++) {
            step.add(let("b" + j, load("b", add(add(mul(var("p"), n), var("col")), i64(j)))));
            for (int r = 0; r < rows; r++) {
                step.add(accVar("c" + r + "_" + j, Stmt.Accumulate.Op.ADD, mul(var("a" + r), var("b" + j))));
            }
        }
        body.add(loop("p", i64(0), k, step.toArray(Stmt[]::new)));
        body.addAll(stores);
        return new IrKernel("block_matmul", matmulParams(m, n, k),
                2, List.of(), body);
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

    /**
     * c = a * b for n x n f32 matrices (n a multiple of 16, the grid n x n in work-groups of 16 x 16): each
     * group stages 16 x 16 tiles of a and b in local memory, with barriers, and each item sums one element
     * of c. Its loads of a and b cannot be proven in bounds (the grid is the launch's), so they are guarded.
     */
    public static IrKernel tiledMatmul() {
        Expr n = var("n64");
        Expr t16 = i64(16);
        Expr here = add(mul(var("ly"), t16), var("lx"));
        return new IrKernel("tiled_matmul", List.of(
                new IrParam.Buffer("a", DType.F32, Access.READ, mul(cast(IrType.I64, param("n")), cast(IrType.I64, param("n")))),
                new IrParam.Buffer("b", DType.F32, Access.READ, mul(cast(IrType.I64, param("n")), cast(IrType.I64, param("n")))),
                new IrParam.Buffer("c", DType.F32, Access.WRITE, mul(cast(IrType.I64, param("n")), cast(IrType.I64, param("n")))),
                new IrParam.Scalar("n", DType.I32, 16L, 65536L)),
                2, List.of(16L, 16L), List.of(
                new Stmt.LocalArray("ta", DType.F32, 256),
                new Stmt.LocalArray("tb", DType.F32, 256),
                let("n64", cast(IrType.I64, param("n"))),
                let("row", gid(1)),
                let("col", gid(0)),
                let("lx", lid(0)),
                let("ly", lid(1)),
                mut("acc", f32(0)),
                loop("t", i64(0), bin(Expr.Binary.Op.DIV, n, t16),
                        store("ta", here, load("a", add(mul(var("row"), n), add(mul(var("t"), t16), var("lx"))))),
                        store("tb", here, load("b", add(mul(add(mul(var("t"), t16), var("ly")), n), var("col")))),
                        new Stmt.Barrier(),
                        loop("k", i64(0), t16,
                                accVar("acc", Stmt.Accumulate.Op.ADD, mul(load("ta", add(mul(var("ly"), t16), var("k"))),
                                        load("tb", add(mul(var("k"), t16), var("lx")))))),
                        new Stmt.Barrier()),
                store("c", add(mul(var("row"), n), var("col")), var("acc"))));
    }

    /** out[i] = x[i] + y[i] for i < n, every access proven in bounds (the buffers hold n elements). */
    public static IrKernel vaddProven() {
        return vadd("vadd_proven", param("n"));
    }

    /**
     * The same sum over buffers that hold m elements while the items run to n: nothing relates m and n, so
     * every access keeps its guard (launched with m = n, none trips).
     */
    public static IrKernel vaddGuarded() {
        return vadd("vadd_guarded", param("m"));
    }

    private static IrKernel vadd(String name, Expr extent) {
        return new IrKernel(name, List.of(
                new IrParam.Buffer("x", DType.F32, Access.READ, extent),
                new IrParam.Buffer("y", DType.F32, Access.READ, extent),
                new IrParam.Buffer("out", DType.F32, Access.WRITE, extent),
                new IrParam.Scalar("n", DType.I64, 0L, 1L << 40),
                new IrParam.Scalar("m", DType.I64, 0L, 1L << 40)),
                1, List.of(), List.of(
                let("i", gid(0)),
                when(lt(var("i"), param("n")),
                        store("out", var("i"), add(load("x", var("i")), load("y", var("i")))))));
    }
}
