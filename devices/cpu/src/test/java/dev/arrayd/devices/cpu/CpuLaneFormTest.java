package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.ir.Expr;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.IrParam;
import dev.arrayd.devices.api.ir.IrSamples;
import dev.arrayd.devices.api.ir.LaneBlocks;
import dev.arrayd.devices.api.ir.Stmt;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static dev.arrayd.devices.api.ir.IrDsl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The lane form on the CPU ({@link LaneBlocks}): the kernels that get it by default, results equal to plain Java
 * at sizes that leave partial blocks (one thread, and three that cut rows at unaligned places), and a launch whose
 * block check fails still caught by the guards of the item form.
 */
class CpuLaneFormTest {

    private static CpuIrHarness one;
    private static CpuIrHarness three;

    @BeforeAll
    static void open() {
        one = new CpuIrHarness(CpuOptions.defaults().withDeviceThreads(1));
        three = new CpuIrHarness(CpuOptions.defaults().withDeviceThreads(3));
    }

    @AfterAll
    static void close() {
        one.close();
        three.close();
    }

    private static String unit(CpuIrHarness h, IrKernel k) {
        return ((CpuKernelCompiler) h.backend.compiler()).translationUnit(KernelSource.ir(new IrModule(List.of(k)))).source();
    }

    @Test
    void theNaiveMatmulRunsInLanesAndMatchesPlainJava() throws Exception {
        Assumptions.assumeTrue(one.available(), "cpu backend unavailable");
        String unit = unit(one, IrSamples.matmul());
        assertTrue(unit.contains("arrayd_lanes_matmul(&item, p0, p1, p2, p3, p4, p5, ext, guard, arrayd_one);"), unit);
        assertTrue(unit.contains("for (int64_t x = range[0]; x < xe; x += 16) {"), unit);
        try (CpuBackend off = new CpuBackend(CpuOptions.defaults().withLanes(LaneBlocks.Rule.OFF))) {
            assertFalse(((CpuKernelCompiler) off.compiler()).translationUnit(KernelSource.ir(new IrModule(List.of(IrSamples.matmul()))))
                    .source().contains("arrayd_lanes_"));
        }
        // 2 x 2 items run alone (n < 16); 37 columns: two blocks of 16 and 5 alone per row; 64: whole blocks only
        for (int[] mnk : new int[][] {{3, 2, 5}, {7, 37, 13}, {33, 64, 9}, {16, 48, 1}}) {
            for (CpuIrHarness h : List.of(one, three)) {
                matmul(h, mnk[0], mnk[1], mnk[2]);
            }
        }
    }

    @Test
    void aTwoByEightBlockMatmulRunsLaneMajorAndMatchesPlainJava() throws Exception {
        Assumptions.assumeTrue(one.available(), "cpu backend unavailable");
        String unit = unit(one, IrSamples.blockMatmul(2, 8));
        assertTrue(unit.contains("static __attribute__((noinline)) void arrayd_lane_run_block_matmul("), unit);
        assertTrue(unit.contains("arrayd_lane_run_block_matmul(range, args);"), unit);
        assertTrue(unit.contains("} arrayd_v[16];"), unit);
        // 37 items along x: two blocks of 16 and 5 alone per row; 16: one whole block; 3: items alone
        for (int[] mnk : new int[][] {{2 * 3, 8 * 37, 13}, {2 * 5, 8 * 16, 1}, {2, 8 * 3, 7}}) {
            for (CpuIrHarness h : List.of(one, three)) {
                blockMatmul(h, mnk[0], mnk[1], mnk[2]);
            }
        }
    }

    private static void matmul(CpuIrHarness h, int m, int n, int k) throws Exception {
        // a grid wider than n by 3 columns: the bounds test fails in the last block of each row
        matmul(h, h.compile(IrSamples.matmul()).getFirst(), new long[] {n + 3, m}, m, n, k);
    }

    private static void blockMatmul(CpuIrHarness h, int m, int n, int k) throws Exception {
        matmul(h, h.compile(IrSamples.blockMatmul(2, 8)).getFirst(), new long[] {n / 8, m / 2}, m, n, k);
    }

    /** Launches a matmul kernel over {@code grid} on fresh a, b and c and checks c against plain Java, bit for bit. */
    private static void matmul(CpuIrHarness h, Kernel kernel, long[] grid, int m, int n, int k) throws Exception {
        h.reset();
        MemRef a = h.alloc(4L * m * k);
        MemRef b = h.alloc(4L * k * n);
        MemRef c = h.alloc(4L * m * n);
        float[] av = new float[m * k];
        float[] bv = new float[k * n];
        for (int i = 0; i < av.length; i++) {
            av[i] = (i % 11) - 5 + 0.5f * (i % 3);
            h.segment(a).setAtIndex(ValueLayout.JAVA_FLOAT, i, av[i]);
        }
        for (int i = 0; i < bv.length; i++) {
            bv[i] = (i % 7) - 3 + 0.25f * (i % 5);
            h.segment(b).setAtIndex(ValueLayout.JAVA_FLOAT, i, bv[i]);
        }
        h.launch(kernel, grid, null, List.of(new KernelArg.Buffer(a), new KernelArg.Buffer(b),
                new KernelArg.Buffer(c), KernelArg.Scalar.i32(m), KernelArg.Scalar.i32(n), KernelArg.Scalar.i32(k)));
        for (int row = 0; row < m; row++) {
            for (int col = 0; col < n; col++) {
                float want = 0;
                for (int kk = 0; kk < k; kk++) {
                    want = want + av[row * k + kk] * bv[kk * n + col];
                }
                assertEquals(Float.floatToIntBits(want), Float.floatToIntBits(h.segment(c).getAtIndex(ValueLayout.JAVA_FLOAT,
                        (long) row * n + col)), m + "x" + n + "x" + k + " at " + row + "," + col);
            }
        }
    }

    /**
     * out[i] = sum over j < n of x[j * w + i] where x[j * w + i] > 0, else its count: a varying if inside the loop, a
     * variable assigned under it. x declares no extent, so its load is checked per block.
     */
    private static IrKernel columnSums() {
        return new IrKernel("column_sums", List.of(
                new IrParam.Buffer("x", DType.F32, Access.READ, null),
                new IrParam.Buffer("out", DType.F32, Access.WRITE, param("w")),
                new IrParam.Scalar("w", DType.I64, 0L, 1L << 20),
                new IrParam.Scalar("n", DType.I64, 0L, 1024L)),
                1, List.of(), List.of(
                let("i", gid(0)),
                when(lt(var("i"), param("w")),
                        mut("s", f32(0)),
                        mut("neg", f32(0)),
                        loop("j", i64(0), param("n"),
                                let("v", load("x", add(mul(var("j"), param("w")), var("i")))),
                                new Stmt.If(bin(Expr.Binary.Op.GT, var("v"), f32(0)),
                                        List.of(accVar("s", Stmt.Accumulate.Op.ADD, var("v"))),
                                        List.of(accVar("neg", Stmt.Accumulate.Op.ADD, f32(1))))),
                        store("out", var("i"), add(var("s"), var("neg"))))));
    }

    @Test
    void aVaryingIfInsideTheLoopAndAGuardCheckedPerBlock() throws Exception {
        Assumptions.assumeTrue(one.available(), "cpu backend unavailable");
        assertTrue(unit(one, columnSums()).contains("arrayd_lanes_column_sums("));
        int w = 45;
        int n = 6;
        for (CpuIrHarness h : List.of(one, three)) {
            Kernel kernel = h.compile(columnSums()).getFirst();
            h.reset();
            MemRef x = h.alloc(4L * w * n);
            MemRef out = h.alloc(4L * w);
            float[] xv = new float[w * n];
            for (int i = 0; i < xv.length; i++) {
                xv[i] = (i % 9) - 4;
                h.segment(x).setAtIndex(ValueLayout.JAVA_FLOAT, i, xv[i]);
            }
            h.launch(kernel, new long[] {w}, null, List.of(new KernelArg.Buffer(x), new KernelArg.Buffer(out),
                    KernelArg.Scalar.i64(w), KernelArg.Scalar.i64(n)));
            for (int i = 0; i < w; i++) {
                float s = 0;
                float neg = 0;
                for (int j = 0; j < n; j++) {
                    float v = xv[j * w + i];
                    if (v > 0) {
                        s += v;
                    } else {
                        neg += 1;
                    }
                }
                assertEquals(s + neg, h.segment(out).getAtIndex(ValueLayout.JAVA_FLOAT, i), "column " + i);
            }
            // one row short: the blocks whose last row reads past x fail their check, and the item form's guard
            // reports the first index past it
            Kernel again = h.compile(columnSums()).getFirst();
            h.reset();
            MemRef shortX = h.alloc(4L * w * (n - 1));
            MemRef out2 = h.alloc(4L * w);
            ArraydException e = assertThrows(ArraydException.class, () -> h.launch(again, new long[] {w}, null,
                    List.of(new KernelArg.Buffer(shortX), new KernelArg.Buffer(out2), KernelArg.Scalar.i64(w),
                            KernelArg.Scalar.i64(n))));
            assertEquals(ErrorCode.OUT_OF_RANGE, e.code(), e::toString);
            assertTrue(e.getMessage().contains("kernel column_sums") && e.getMessage().contains("of buffer x"), e::getMessage);
        }
    }

    @Test
    void localAndGroupIdsInLanes() throws Exception {
        Assumptions.assumeTrue(one.available(), "cpu backend unavailable");
        // out[i] = local_id(0) * 1000 + group_id(0), with a loop of per-lane work so that AUTO picks the lane form
        IrKernel ids = new IrKernel("ids", List.of(new IrParam.Buffer("out", DType.I64, Access.WRITE, param("n")),
                new IrParam.Scalar("n", DType.I64, 0L, 1L << 20)), 1, List.of(), List.of(
                let("i", gid(0)),
                when(lt(var("i"), param("n")),
                        mut("t", i64(0)),
                        loop("j", i64(0), i64(3), accVar("t", Stmt.Accumulate.Op.ADD, add(sub(var("i"), var("i")), i64(1)))),
                        store("out", var("i"), add(mul(lid(0), i64(1000)), add(group(0), sub(var("t"), i64(3))))))));
        assertTrue(unit(one, ids).contains("arrayd_lanes_ids("));
        int n = 100;
        for (CpuIrHarness h : List.of(one, three)) {
            Kernel kernel = h.compile(ids).getFirst();
            h.reset();
            MemRef out = h.alloc(8L * n);
            h.launch(kernel, new long[] {n}, new long[] {20}, List.of(new KernelArg.Buffer(out), KernelArg.Scalar.i64(n)));
            for (int i = 0; i < n; i++) {
                assertEquals((i % 20) * 1000L + i / 20, h.segment(out).getAtIndex(ValueLayout.JAVA_LONG, i), "item " + i);
            }
        }
    }
}
