package dev.arrayd.benchmarks;

import dev.arrayd.cli.DemoKernels;
import dev.arrayd.client.Access;
import dev.arrayd.client.DType;
import dev.arrayd.client.Ir;
import dev.arrayd.client.IrBlock;
import dev.arrayd.client.IrExpr;
import dev.arrayd.client.IrKernelBuilder;
import dev.arrayd.client.IrKernelSpec;
import dev.arrayd.client.KernelModuleSpec;

/**
 * The kernels of {@code bench kernels} in the portable IR, what a daemon with default flags runs: the same
 * entry points, parameters and algorithms as {@link BenchKernels}' C and OpenCL C (a two-pass sum, a matmul
 * tiled {@value BenchKernels#TILE_M} x {@value BenchKernels#TILE_N} in registers, a softmax per row), so
 * every column runs the same launches. Buffers declare their extents from the scalars; what the validator
 * cannot prove is guarded, on the CPU once per block of work-items where the index is affine.
 */
final class IrBenchKernels {

    private static final int INT_MAX = Integer.MAX_VALUE;
    /** Loop bounds declared by the scalars that bound loops: a column count, a chunk, k. */
    private static final int LOOP_MAX = 1 << 16;

    private IrBenchKernels() {}

    /**
     * Every kernel in one module, for {@code backend}; with {@code relaxed} the sum's first pass allows relaxed
     * floating point (reassociation: its loop over the chunk vectorizes on the CPU), else every kernel is strict. The
     * matmul stays strict: its eight accumulators per row are independent, gcc vectorizes them without reassociation,
     * and with it chose a slower form (measured: 65 against 81 GFLOP/s).
     */
    static KernelModuleSpec module(String backend, boolean relaxed) {
        return KernelModuleSpec.ir(empty(), vadd(), saxpy(), sumPartial(relaxed), sumFinal(), matmul(), softmax())
                .backend(backend);
    }

    private static IrExpr i64(String scalar) {
        return Ir.param(scalar).toI64();
    }

    static IrKernelSpec empty() {
        return Ir.kernel(BenchKernels.EMPTY).body(b -> { });
    }

    static IrKernelSpec vadd() {
        IrExpr n = i64("n");
        return Ir.kernel("vadd").buffer("a", DType.F32, Access.READ, n).buffer("b", DType.F32, Access.READ, n)
                .buffer("c", DType.F32, Access.WRITE, n).scalar("n", DType.I32, 0, INT_MAX).body(b -> {
                    IrExpr i = b.let("i", Ir.globalId(0));
                    b.when(i.lt(n), t -> t.store("c", i, Ir.load("a", i).add(Ir.load("b", i))));
                });
    }

    static IrKernelSpec saxpy() {
        IrExpr n = i64("n");
        return Ir.kernel("saxpy").scalar("alpha", DType.F32).buffer("x", DType.F32, Access.READ, n)
                .buffer("y", DType.F32, Access.READ_WRITE, n).scalar("n", DType.I32, 0, INT_MAX).body(b -> {
                    IrExpr i = b.let("i", Ir.globalId(0));
                    b.when(i.lt(n), t -> t.store("y", i, Ir.param("alpha").mul(Ir.load("x", i)).add(Ir.load("y", i))));
                });
    }

    /** Work-item i sums x[i * chunk .. min((i + 1) * chunk, n)) into partial[i]. */
    static IrKernelSpec sumPartial(boolean relaxed) {
        IrExpr n = i64("n");
        IrExpr chunk = i64("chunk");
        return math(Ir.kernel("sum_partial"), relaxed).buffer("x", DType.F32, Access.READ, n)
                .buffer("partial", DType.F32, Access.WRITE, Ir.globalSize(0))
                .scalar("n", DType.I32, 0, INT_MAX).scalar("chunk", DType.I32, 1, LOOP_MAX).body(b -> {
                    IrExpr i = b.let("i", Ir.globalId(0));
                    IrExpr lo = b.let("lo", i.mul(chunk));
                    IrExpr s = b.var("s", Ir.f32(0));
                    b.loop("j", Ir.i64(0), chunk, (l, j) -> {
                        IrExpr k = l.let("k", lo.add(j));
                        l.when(k.lt(n), t -> t.accumulate("s", IrBlock.Accumulate.ADD, Ir.load("x", k)));
                    });
                    b.store("partial", i, s);
                });
    }

    static IrKernelSpec sumFinal() {
        IrExpr parts = i64("parts");
        return Ir.kernel("sum_final").buffer("partial", DType.F32, Access.READ, parts)
                .buffer("out", DType.F32, Access.WRITE, Ir.i64(1)).scalar("parts", DType.I32, 0, 1 << 24).body(b -> {
                    IrExpr s = b.var("s", Ir.f32(0));
                    b.loop("k", Ir.i64(0), parts, (l, k) -> l.accumulate("s", IrBlock.Accumulate.ADD, Ir.load("partial", k)));
                    b.store("out", Ir.i64(0), s);
                });
    }

    /**
     * Work-item (x, y) computes rows 2y, 2y + 1 and columns 8x .. 8x + 7 of C: the register-blocked matmul of
     * docs/kernels.md in the block and grid order of {@link BenchKernels}' C and OpenCL C.
     */
    static IrKernelSpec matmul() {
        return DemoKernels.matmulBlocked("matmul", BenchKernels.TILE_M, BenchKernels.TILE_N, false, LOOP_MAX);
    }

    private static IrKernelBuilder math(IrKernelBuilder k, boolean relaxed) {
        return relaxed ? k.relaxedMath() : k;
    }

    /** The demo's row softmax (one work-item per row: the maximum, the exponentials and their sum, the scale), with int counts. */
    static IrKernelSpec softmax() {
        return dev.arrayd.cli.DemoKernels.softmax(DType.I32);
    }
}
