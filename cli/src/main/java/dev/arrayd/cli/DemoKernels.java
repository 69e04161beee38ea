package dev.arrayd.cli;

import dev.arrayd.client.Access;
import dev.arrayd.client.DType;
import dev.arrayd.client.Ir;
import dev.arrayd.client.IrBlock;
import dev.arrayd.client.IrExpr;
import dev.arrayd.client.IrKernelBuilder;
import dev.arrayd.client.IrKernelSpec;
import java.util.List;

/**
 * The IR kernels of {@code arrayd demo --kernel NAME}, exactly as docs/kernels.md shows them. All of
 * them run on a daemon without {@code --allow-native-source}. The stencils are public: {@code bench padding}
 * measures them.
 */
public final class DemoKernels {

    /** The names {@code --kernel} takes. */
    static final List<String> NAMES = List.of("vadd", "saxpy", "sum", "matmul", "matmul_blocked", "matmul_tiles", "softmax",
            "stencil");

    /** Work-items per group of {@link #sum()}. */
    static final int SUM_GROUP = 256;
    /** Tile edge of {@link #matmul()}: matrix sizes are multiples of it. */
    static final int TILE = 16;
    /** Rows of c each work-item of {@link #matmulBlocked()} computes: m is a multiple of it. */
    public static final int BLOCK_ROWS = 4;
    /** Columns of c each work-item of {@link #matmulBlocked()} computes: n is a multiple of it. */
    public static final int BLOCK_COLS = 64;

    /** Edge of the tile of c one work-group of {@link #matmulTiles()} computes: m and n are multiples of it. */
    public static final int TILES_EDGE = 32;
    /** Work-items along each dimension of a group of {@link #matmulTiles()}. */
    public static final int TILES_ITEMS = 8;
    /** Rows and columns of c each work-item of {@link #matmulTiles()} computes. */
    public static final int TILES_BLOCK = TILES_EDGE / TILES_ITEMS;
    /** Depth of the tiles of a and b {@link #matmulTiles()} stages per step: k is a multiple of it. */
    public static final int TILES_DEPTH = 16;

    private DemoKernels() {}

    /**
     * A 2-D 5-point stencil on a padded array, over a w x h grid (the launch's global size): {@code in} is the w x h
     * interior with a halo of one element on every side ((h + 2) x (w + 2) in memory, the halo holding the boundary
     * value), so every work-item (x, y) reads its four neighbours without a test: out[y][x] = 0.2 * (in[y][x] + its
     * four neighbours), in interior coordinates. The buffers' extents are stated in the grid's size, so the IR's
     * range analysis proves all six accesses from the work-item's position alone: no guard and no {@code when}.
     */
    public static IrKernelSpec stencil() {
        IrExpr w = Ir.globalSize(0);
        IrExpr h = Ir.globalSize(1);
        return Ir.kernel("stencil").gridDims(2)
                .buffer("in", DType.F32, Access.READ, h.add(Ir.i64(2)).mul(w.add(Ir.i64(2))))
                .buffer("out", DType.F32, Access.WRITE, h.mul(w))
                .body(b -> {
                    IrExpr x = b.let("x", Ir.globalId(0));
                    IrExpr y = b.let("y", Ir.globalId(1));
                    IrExpr row = b.let("row", w.add(Ir.i64(2)));
                    IrExpr c = b.let("c", y.add(Ir.i64(1)).mul(row).add(x).add(Ir.i64(1)));
                    IrExpr sum = Ir.load("in", c).add(Ir.load("in", c.sub(Ir.i64(1)))).add(Ir.load("in", c.add(Ir.i64(1))))
                            .add(Ir.load("in", c.sub(row))).add(Ir.load("in", c.add(row)));
                    b.store("out", y.mul(w).add(x), Ir.f32(0.2f).mul(sum));
                });
    }

    /**
     * The same stencil on a plain w x h array: each neighbour outside it is the boundary value {@code edge},
     * chosen by a {@code select} on the work-item's position; each neighbour's index is written from x and y
     * inside its {@code select}, where the condition bounds them, so the load it guards is proven too. (Of the
     * ways to write it, this one, with the grid's bounds tested in a {@code when}, ran fastest on the CPU.)
     */
    public static IrKernelSpec stencilGuarded() {
        return Ir.kernel("stencil_guarded").gridDims(2)
                .buffer("in", DType.F32, Access.READ, Ir.param("h").mul(Ir.param("w")))
                .buffer("out", DType.F32, Access.WRITE, Ir.param("h").mul(Ir.param("w")))
                .scalar("w", DType.I64, 1, 1L << 20)
                .scalar("h", DType.I64, 1, 1L << 20)
                .scalar("edge", DType.F32)
                .body(b -> {
                    IrExpr x = b.let("x", Ir.globalId(0));
                    IrExpr y = b.let("y", Ir.globalId(1));
                    IrExpr w = Ir.param("w");
                    IrExpr h = Ir.param("h");
                    IrExpr edge = Ir.param("edge");
                    b.when(x.lt(w).andThen(y.lt(h)), then -> {
                        IrExpr i = then.let("i", y.mul(w).add(x));
                        IrExpr left = Ir.select(x.gt(Ir.i64(0)), Ir.load("in", y.mul(w).add(x.sub(Ir.i64(1)))), edge);
                        IrExpr right = Ir.select(x.add(Ir.i64(1)).lt(w), Ir.load("in", y.mul(w).add(x.add(Ir.i64(1)))), edge);
                        IrExpr up = Ir.select(y.gt(Ir.i64(0)), Ir.load("in", y.sub(Ir.i64(1)).mul(w).add(x)), edge);
                        IrExpr down = Ir.select(y.add(Ir.i64(1)).lt(h), Ir.load("in", y.add(Ir.i64(1)).mul(w).add(x)),
                                edge);
                        then.store("out", i, Ir.f32(0.2f).mul(Ir.load("in", i).add(left).add(right).add(up).add(down)));
                    });
                });
    }

    /** c[i] = a[i] + b[i] for i < n. */
    static IrKernelSpec vadd() {
        return Ir.kernel("vadd")
                .buffer("a", DType.F32, Access.READ, Ir.param("n"))
                .buffer("b", DType.F32, Access.READ, Ir.param("n"))
                .buffer("c", DType.F32, Access.WRITE, Ir.param("n"))
                .scalar("n", DType.I64, 0, 1L << 40)
                .body(b -> {
                    IrExpr i = b.let("i", Ir.globalId(0));
                    b.when(i.lt(Ir.param("n")), then -> then.store("c", i, Ir.load("a", i).add(Ir.load("b", i))));
                });
    }

    /** y[i] = a * x[i] + y[i] for i < n. */
    static IrKernelSpec saxpy() {
        return Ir.kernel("saxpy")
                .scalar("a", DType.F32)
                .buffer("x", DType.F32, Access.READ, Ir.param("n"))
                .buffer("y", DType.F32, Access.READ_WRITE, Ir.param("n"))
                .scalar("n", DType.I64, 0, 1L << 40)
                .body(b -> {
                    IrExpr i = b.let("i", Ir.globalId(0));
                    b.when(i.lt(Ir.param("n")), then ->
                            then.store("y", i, Ir.param("a").mul(Ir.load("x", i)).add(Ir.load("y", i))));
                });
    }

    /**
     * partial[g] = the sum of x over work-group g (256 items): each item puts one element into local
     * memory, then a tree reduction halves the active items at each level, with a barrier between levels.
     * The client adds the partial sums.
     */
    static IrKernelSpec sum() {
        return Ir.kernel("sum")
                .localSize(SUM_GROUP)
                .buffer("x", DType.F32, Access.READ, Ir.param("n"))
                .buffer("partial", DType.F32, Access.WRITE)
                .scalar("n", DType.I64, 0, 1L << 40)
                .body(b -> {
                    b.localArray("tile", DType.F32, SUM_GROUP);
                    IrExpr i = b.let("i", Ir.globalId(0));
                    IrExpr l = b.let("l", Ir.localId(0));
                    b.store("tile", l, Ir.select(i.lt(Ir.param("n")), Ir.load("x", i), Ir.f32(0)));
                    b.barrier();
                    b.loop("level", Ir.i64(0), Ir.i64(8), (body, level) -> {
                        IrExpr stride = body.let("stride", Ir.i64(SUM_GROUP / 2).shr(level));
                        body.when(l.lt(stride), add ->
                                add.accumulate("tile", l, IrBlock.Accumulate.ADD, Ir.load("tile", l.add(stride))));
                        body.barrier();
                    });
                    b.when(l.eq(Ir.i64(0)), first -> first.store("partial", Ir.groupId(0), Ir.load("tile", Ir.i64(0))));
                });
    }

    /**
     * c = a (m x k) * b (k x n), f32, in 16 x 16 tiles: each group stages a tile of a and one of b in
     * local memory, waits at a barrier, multiplies them, and waits again before the next tiles.
     * m, n, k are multiples of 16; the grid is n x m.
     */
    static IrKernelSpec matmul() {
        IrExpr m = Ir.param("m").toI64();
        IrExpr n = Ir.param("n").toI64();
        IrExpr k = Ir.param("k").toI64();
        IrExpr t = Ir.i64(TILE);
        return matmulSignature("matmul", 8192)
                .localSize(TILE, TILE)
                .body(b -> {
                    b.localArray("ta", DType.F32, TILE * TILE);
                    b.localArray("tb", DType.F32, TILE * TILE);
                    IrExpr lx = b.let("lx", Ir.localId(0));
                    IrExpr ly = b.let("ly", Ir.localId(1));
                    IrExpr row = b.let("row", Ir.globalId(1));
                    IrExpr col = b.let("col", Ir.globalId(0));
                    IrExpr acc = b.var("acc", Ir.f32(0));
                    b.loop("tile", Ir.i64(0), k.div(t), (body, tile) -> {
                        body.store("ta", ly.mul(t).add(lx), Ir.load("a", row.mul(k).add(tile.mul(t).add(lx))));
                        body.store("tb", ly.mul(t).add(lx), Ir.load("b", tile.mul(t).add(ly).mul(n).add(col)));
                        body.barrier();
                        body.loop("e", Ir.i64(0), t, (inner, e) -> inner.accumulate("acc", IrBlock.Accumulate.ADD,
                                Ir.load("ta", ly.mul(t).add(e)).mul(Ir.load("tb", e.mul(t).add(lx)))));
                        body.barrier();
                    });
                    b.when(row.lt(m).andThen(col.lt(n)), store -> store.store("c", row.mul(n).add(col), acc));
                });
    }

    /**
     * c = a (m x k) * b (k x n), f32, blocked in registers: each work-item computes a 4 x 64 block of c in 256
     * variables; each step of k loads 4 values of a (a column of the block's rows) and 64 of b (a row of its
     * columns) and does the 256 multiply-adds. No local memory, no barrier: what the CPU backend runs fastest
     * (the 64 columns are four vectors, the sums stay in registers); the grid is n/64 x m/4, m a multiple of 4
     * and n of 64 (a launch that reaches past them fails with OUT_OF_RANGE: the accesses are guarded, the
     * guards checked once per block of work-items).
     */
    public static IrKernelSpec matmulBlocked() {
        return matmulBlocked("matmul_blocked", BLOCK_ROWS, BLOCK_COLS, true, 8192);
    }

    /**
     * {@link #matmulBlocked()} with another name, block ({@code rows} x {@code cols}), grid order and bound: with
     * {@code rowsFirst} the grid's first dimension walks the blocks of rows (m/rows x n/cols), else the blocks of
     * columns (n/cols x m/rows); m, n and k are declared up to {@code max}. {@code bench kernels} runs its 2 x 8
     * form, columns first, beside the same algorithm in C and OpenCL C.
     */
    public static IrKernelSpec matmulBlocked(String name, int rows, int cols, boolean rowsFirst, int max) {
        IrExpr n = Ir.param("n").toI64();
        IrExpr k = Ir.param("k").toI64();
        return matmulSignature(name, max)
                .body(b -> {
                    IrExpr row = b.let("row", Ir.globalId(rowsFirst ? 0 : 1).mul(Ir.i64(rows)));
                    IrExpr col = b.let("col", Ir.globalId(rowsFirst ? 1 : 0).mul(Ir.i64(cols)));
                    for (int r = 0; r < rows; r++) {
                        for (int j = 0; j < cols; j++) {
                            b.var(blockSum(r, j), Ir.f32(0));
                        }
                    }
                    b.loop("p", Ir.i64(0), k, (step, p) -> {
                        IrExpr[] av = new IrExpr[rows];
                        for (int r = 0; r < rows; r++) {
                            av[r] = step.let("a" + r, Ir.load("a", row.add(Ir.i64(r)).mul(k).add(p)));
                        }
                        for (int j = 0; j < cols; j++) {
                            IrExpr bv = step.let("b" + j, Ir.load("b", p.mul(n).add(col).add(Ir.i64(j))));
                            for (int r = 0; r < rows; r++) {
                                step.accumulate(blockSum(r, j), IrBlock.Accumulate.ADD, av[r].mul(bv));
                            }
                        }
                    });
                    for (int r = 0; r < rows; r++) {
                        for (int j = 0; j < cols; j++) {
                            b.store("c", row.add(Ir.i64(r)).mul(n).add(col).add(Ir.i64(j)), Ir.var(blockSum(r, j)));
                        }
                    }
                });
    }

    /**
     * c = a (m x k) * b (k x n), f32, with both: work-group tiles in local memory and blocks in registers. A group of
     * 8 x 8 work-items computes a 32 x 32 tile of c, each work-item a 4 x 4 block of it in 16 variables. Per step of
     * 16 along k, the group stages the 32 x 16 tile of a and the 16 x 32 tile of b it needs in local memory (each
     * work-item loads 8 elements of each), waits at a barrier, and each work-item does its 16 x 16 multiply-adds from
     * local memory (4 values of a and 4 of b per step of the 16), then waits again. Every element of a and b is
     * read from memory once per group instead of once per work-item: the shape GPUs want. m and n are multiples
     * of 32, k of 16; the grid is n/4 x m/4 in groups of 8 x 8.
     */
    public static IrKernelSpec matmulTiles() {
        IrExpr n = Ir.param("n").toI64();
        IrExpr k = Ir.param("k").toI64();
        int edge = TILES_EDGE;
        int depth = TILES_DEPTH;
        int block = TILES_BLOCK;
        return matmulSignature("matmul_tiles", 8192)
                .localSize(TILES_ITEMS, TILES_ITEMS)
                .body(b -> {
                    b.localArray("ta", DType.F32, edge * depth);
                    b.localArray("tb", DType.F32, depth * edge);
                    IrExpr lx = b.let("lx", Ir.localId(0));
                    IrExpr ly = b.let("ly", Ir.localId(1));
                    IrExpr row = b.let("row", Ir.globalId(1).mul(Ir.i64(block))); // rows row .. row + 3
                    IrExpr col = b.let("col", Ir.globalId(0).mul(Ir.i64(block))); // columns col .. col + 3
                    for (int r = 0; r < block; r++) {
                        for (int j = 0; j < block; j++) {
                            b.var(blockSum(r, j), Ir.f32(0));
                        }
                    }
                    b.loop("step", Ir.i64(0), k.div(Ir.i64(depth)), (body, step) -> {
                        IrExpr k0 = body.let("k0", step.mul(Ir.i64(depth)));
                        // a: this item's 4 rows, 2 of the 16 columns each (8 items across make the 16)
                        for (int q = 0; q < block; q++) {
                            for (int j = 0; j < 2; j++) {
                                IrExpr kk = lx.mul(Ir.i64(2)).add(Ir.i64(j));
                                body.store("ta", ly.mul(Ir.i64(block)).add(Ir.i64(q)).mul(Ir.i64(depth)).add(kk),
                                        Ir.load("a", row.add(Ir.i64(q)).mul(k).add(k0).add(kk)));
                            }
                        }
                        // b: 2 of the 16 rows (8 items down make the 16), this item's 4 columns each
                        for (int q = 0; q < 2; q++) {
                            IrExpr kr = ly.mul(Ir.i64(2)).add(Ir.i64(q));
                            for (int j = 0; j < block; j++) {
                                body.store("tb", kr.mul(Ir.i64(edge)).add(lx.mul(Ir.i64(block))).add(Ir.i64(j)),
                                        Ir.load("b", k0.add(kr).mul(n).add(col).add(Ir.i64(j))));
                            }
                        }
                        body.barrier();
                        body.loop("e", Ir.i64(0), Ir.i64(depth), (inner, e) -> {
                            IrExpr[] av = new IrExpr[block];
                            for (int r = 0; r < block; r++) {
                                av[r] = inner.let("a" + r, Ir.load("ta", ly.mul(Ir.i64(block)).add(Ir.i64(r))
                                        .mul(Ir.i64(depth)).add(e)));
                            }
                            for (int j = 0; j < block; j++) {
                                IrExpr bv = inner.let("b" + j, Ir.load("tb", e.mul(Ir.i64(edge)).add(lx.mul(Ir.i64(block)))
                                        .add(Ir.i64(j))));
                                for (int r = 0; r < block; r++) {
                                    inner.accumulate(blockSum(r, j), IrBlock.Accumulate.ADD, av[r].mul(bv));
                                }
                            }
                        });
                        body.barrier();
                    });
                    for (int r = 0; r < block; r++) {
                        for (int j = 0; j < block; j++) {
                            b.store("c", row.add(Ir.i64(r)).mul(n).add(col).add(Ir.i64(j)), Ir.var(blockSum(r, j)));
                        }
                    }
                });
    }

    /** What every matmul here takes: c (m x n) = a (m x k) * b (k x n), f32, with m, n, k in 0..max. */
    private static IrKernelBuilder matmulSignature(String name, int max) {
        IrExpr m = Ir.param("m").toI64();
        IrExpr n = Ir.param("n").toI64();
        IrExpr k = Ir.param("k").toI64();
        return Ir.kernel(name)
                .gridDims(2)
                .buffer("a", DType.F32, Access.READ, m.mul(k))
                .buffer("b", DType.F32, Access.READ, k.mul(n))
                .buffer("c", DType.F32, Access.WRITE, m.mul(n))
                .scalar("m", DType.I32, 0, max)
                .scalar("n", DType.I32, 0, max)
                .scalar("k", DType.I32, 0, max);
    }

    private static String blockSum(int row, int col) {
        return "c" + row + "_" + col;
    }

    /** y[r, :] = softmax(x[r, :]) for each of `rows` rows of `cols` f32, one work-item per row (max-subtracted). */
    public static IrKernelSpec softmax() {
        return softmax(DType.I64);
    }

    /** {@link #softmax()} with its row and column counts of type {@code counts} (I64, or I32 as C's {@code int}). */
    public static IrKernelSpec softmax(DType counts) {
        IrExpr rows = counts == DType.I64 ? Ir.param("rows") : Ir.param("rows").toI64();
        IrExpr cols = counts == DType.I64 ? Ir.param("cols") : Ir.param("cols").toI64();
        return Ir.kernel("softmax")
                .buffer("x", DType.F32, Access.READ, rows.mul(cols))
                .buffer("y", DType.F32, Access.WRITE, rows.mul(cols))
                .scalar("rows", counts, 0, 1L << 24)
                .scalar("cols", counts, 1, 1L << 16)
                .body(b -> {
                    IrExpr r = b.let("r", Ir.globalId(0));
                    b.when(r.lt(rows), row -> {
                        IrExpr base = row.let("base", r.mul(cols));
                        IrExpr max = row.var("max", Ir.load("x", base));
                        row.loop("j", Ir.i64(1), cols, (l, j) ->
                                l.accumulate("max", IrBlock.Accumulate.MAX, Ir.load("x", base.add(j))));
                        IrExpr total = row.var("total", Ir.f32(0));
                        row.loop("j2", Ir.i64(0), cols, (l, j) -> {
                            IrExpr e = l.let("e", Ir.load("x", base.add(j)).sub(max).exp());
                            l.store("y", base.add(j), e);
                            l.accumulate("total", IrBlock.Accumulate.ADD, e);
                        });
                        IrExpr inv = row.let("inv", Ir.f32(1).div(total));
                        row.loop("j3", Ir.i64(0), cols, (l, j) ->
                                l.store("y", base.add(j), Ir.load("y", base.add(j)).mul(inv)));
                    });
                });
    }
}
