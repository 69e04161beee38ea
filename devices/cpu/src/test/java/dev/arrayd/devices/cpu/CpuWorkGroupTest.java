package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.testing.ResourcesPerClass;
import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.Expr;
import dev.arrayd.devices.api.ir.GroupPhases;
import dev.arrayd.devices.api.ir.IrInterpreter;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.IrParam;
import dev.arrayd.devices.api.ir.IrSamples;
import dev.arrayd.devices.api.ir.IrType;
import dev.arrayd.devices.api.ir.IrValidator;
import dev.arrayd.devices.api.ir.Stmt;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static dev.arrayd.devices.api.ir.IrDsl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Local arrays and barriers on the CPU: work-groups run in phases split at barriers. */
@ResourcesPerClass("one CPU backend and its compiled kernels serve every test; its worker pool starts with the first split launch")
class CpuWorkGroupTest {

    private static CpuIrHarness h;

    @BeforeAll
    static void open() {
        h = new CpuIrHarness();
    }

    @AfterAll
    static void close() {
        h.close();
    }

    @Test
    void groupSumMatchesTheInterpreterOnSmallAndSplitGrids() throws Exception {
        Assumptions.assumeTrue(h.available(), "cpu backend unavailable");
        Kernel k = h.compile(IrSamples.groupSum()).getFirst();
        CheckedKernel checked = IrValidator.check(new IrModule(List.of(IrSamples.groupSum())), "").getFirst();
        // 4096 items run on the stream's thread; 65536 are split across workers in whole groups
        for (int n : new int[] {4096, 65536}) {
            h.reset();
            MemRef x = h.alloc(4L * n);
            MemRef partial = h.alloc(4L * (n / 256));
            float[] values = new float[n];
            for (int i = 0; i < n; i++) {
                values[i] = (i % 17) - 8 + 0.25f * (i % 3);
                h.segment(x).setAtIndex(ValueLayout.JAVA_FLOAT, i, values[i]);
            }
            h.launch(k, new long[] {n}, null, List.of(new KernelArg.Buffer(x), new KernelArg.Buffer(partial)));
            MemorySegment ref = MemorySegment.ofArray(new float[n / 256]);
            IrInterpreter.run(checked, new long[] {n}, null, List.of(MemorySegment.ofArray(values.clone()), ref));
            for (int g = 0; g < n / 256; g++) {
                float want = ref.getAtIndex(ValueLayout.JAVA_FLOAT, g);
                assertEquals(Float.floatToIntBits(want), Float.floatToIntBits(h.segment(partial).getAtIndex(ValueLayout.JAVA_FLOAT, g)),
                        "n " + n + ", group " + g);
                float plain = 0;
                for (int i = 0; i < 256; i++) {
                    plain += values[g * 256 + i];
                }
                assertEquals(plain, want, 1e-3f, "group " + g);
            }
        }
    }

    /**
     * A phased kernel's guards affine in the global ids are checked once per run of groups (the group sum's load of
     * {@code x}, which declares no extent): the unit has the fast copy and the predicate, and a launch whose last group
     * reads past {@code x} still fails with OUT_OF_RANGE naming the index, the groups before it done.
     */
    @Test
    void aPhasedKernelsAffineGuardsAreCheckedPerRunOfGroupsAndStillCatchAnOutOfBoundsGroup() throws Exception {
        Assumptions.assumeTrue(h.available(), "cpu backend unavailable");
        String unit = ((CpuKernelCompiler) h.backend.compiler())
                .translationUnit(KernelSource.ir(new IrModule(List.of(IrSamples.groupSum())))).source();
        assertTrue(unit.contains("arrayd_ok_group_sum(&box, lo, hi, p0, p1, ext)"), unit);
        assertTrue(unit.contains("(arrayd_ok ? p_x["), unit);
        Kernel k = h.compile(IrSamples.groupSum()).getFirst();
        h.reset();
        int n = 300; // the second group's items 300..511 read past x
        MemRef x = h.alloc(4L * n);
        MemRef partial = h.alloc(4L * 2);
        float first = 0;
        for (int i = 0; i < n; i++) {
            h.segment(x).setAtIndex(ValueLayout.JAVA_FLOAT, i, i % 5);
            first += i < 256 ? i % 5 : 0;
        }
        ArraydException e = assertThrows(ArraydException.class, () -> h.launch(k, new long[] {512}, null,
                List.of(new KernelArg.Buffer(x), new KernelArg.Buffer(partial))));
        assertEquals(ErrorCode.OUT_OF_RANGE, e.code(), e::toString);
        assertTrue(e.getMessage().contains("kernel group_sum") && e.getMessage().contains("index 300 of buffer x"),
                e::getMessage);
        assertEquals(first, h.segment(partial).getAtIndex(ValueLayout.JAVA_FLOAT, 0), "the first group's sum");
    }

    /**
     * Runs that are an {@code if (local_id(0) < bound)} stop their item loop at the bound
     * ({@code GroupPhases.itemBound}): bounds past the group's size (40 of 32), inside it, zero and negative, on groups
     * of 32 x 2 items (the bound applies to x, for every y), against the interpreter.
     */
    @Test
    void itemLoopsStopAtTheBoundOfTheirLocalIdTest() throws Exception {
        Assumptions.assumeTrue(h.available(), "cpu backend unavailable");
        Expr here = add(mul(lid(1), i64(32)), lid(0));
        IrKernel k = new IrKernel("bounded", List.of(new IrParam.Buffer("x", DType.F32, Access.READ_WRITE, i64(64 * 8))), 2,
                List.of(32L, 2L), List.of(
                new Stmt.LocalArray("t", DType.F32, 64),
                let("g", add(mul(gid(1), i64(32)), gid(0))),
                store("t", here, load("x", var("g"))),
                new Stmt.Barrier(),
                loop("level", i64(0), i64(4),
                        let("b", sub(i64(40), mul(var("level"), i64(15)))),
                        when(lt(lid(0), var("b")),
                                new Stmt.Accumulate("t", here, Stmt.Accumulate.Op.ADD, cast(IrType.F32, add(var("level"), i64(1))))),
                        new Stmt.Barrier()),
                store("x", var("g"), load("t", here))));
        String unit = ((CpuKernelCompiler) h.backend.compiler()).translationUnit(KernelSource.ir(new IrModule(List.of(k)))).source();
        assertTrue(unit.contains("arrayd_lx < arrayd_lx_end"), unit);
        Kernel kernel = h.compile(k).getFirst();
        h.reset();
        MemRef x = h.alloc(4L * 64 * 8);
        float[] values = new float[64 * 8];
        for (int i = 0; i < values.length; i++) {
            values[i] = i % 5;
            h.segment(x).setAtIndex(ValueLayout.JAVA_FLOAT, i, values[i]);
        }
        h.launch(kernel, new long[] {32, 16}, null, List.of(new KernelArg.Buffer(x)));
        MemorySegment ref = MemorySegment.ofArray(values.clone());
        IrInterpreter.run(IrValidator.check(new IrModule(List.of(k)), "").getFirst(), new long[] {32, 16}, null, List.of(ref));
        for (int i = 0; i < values.length; i++) {
            assertEquals(ref.getAtIndex(ValueLayout.JAVA_FLOAT, i), h.segment(x).getAtIndex(ValueLayout.JAVA_FLOAT, i), "element " + i);
        }
        // item 5 of each row: every level (bounds 40, 25, 10, -5 → the first three) adds 1 + 2 + 3
        assertEquals(values[5] + 6, h.segment(x).getAtIndex(ValueLayout.JAVA_FLOAT, 5));
        // item 30: only the first level (bound 40)
        assertEquals(values[30] + 1, h.segment(x).getAtIndex(ValueLayout.JAVA_FLOAT, 30));
    }

    @Test
    void variablesLiveAcrossBarriersAreSpilledPerItem() {
        CheckedKernel sum = IrValidator.check(new IrModule(List.of(IrSamples.groupSum())), "").getFirst();
        assertTrue(GroupPhases.needed(sum));
        // `stride` is declared and used inside one phase of the loop body: no per-item copy needed
        assertEquals(Set.of(), GroupPhases.spilled(sum));
        CheckedKernel tiled = IrValidator.check(new IrModule(List.of(tiledMatmul())), "").getFirst();
        assertEquals(Set.of("row", "col", "acc"), GroupPhases.spilled(tiled));
        assertEquals((8L + 8 + 4) * 256, GroupPhases.spillBytes(tiled)); // row, col: i64; acc: f32
    }

    @Test
    void tiledMatmulWithLocalTilesMatchesPlainJava() throws Exception {
        Assumptions.assumeTrue(h.available(), "cpu backend unavailable");
        checkTiledMatmul(tiledMatmul());
    }

    /**
     * The same kernel allowing relaxed floating point: its group function and group trampoline are compiled with
     * reassociation; its inputs (small integers and halves) make every order of the sums exact, so it must match too.
     */
    @Test
    void aRelaxedKernelRunsInPhasesToo() throws Exception {
        Assumptions.assumeTrue(h.available(), "cpu backend unavailable");
        IrKernel t = tiledMatmul();
        IrKernel relaxed = new IrKernel(t.name(), t.params(), t.gridDims(), t.localSize(), t.body(), true);
        String unit = ((CpuKernelCompiler) h.backend.compiler())
                .translationUnit(dev.arrayd.devices.api.KernelSource.ir(new IrModule(List.of(relaxed)))).source();
        assertTrue(unit.contains("ARRAYD_RELAXED ARRAYD_KERNEL void arrayd_k_tiled(const arrayd_i64 *arrayd_grp"), unit);
        assertTrue(unit.contains("ARRAYD_RELAXED void ARRAYD_RUN(tiled)("), unit);
        checkTiledMatmul(relaxed);
    }

    private static void checkTiledMatmul(IrKernel kernel) throws Exception {
        Kernel k = h.compile(kernel).getFirst();
        int m = 48, n = 32, kk = 64;
        h.reset();
        MemRef a = h.alloc(4L * m * kk);
        MemRef b = h.alloc(4L * kk * n);
        MemRef c = h.alloc(4L * m * n);
        float[] av = new float[m * kk];
        float[] bv = new float[kk * n];
        for (int i = 0; i < av.length; i++) {
            av[i] = (i % 7) - 3;
            h.segment(a).setAtIndex(ValueLayout.JAVA_FLOAT, i, av[i]);
        }
        for (int i = 0; i < bv.length; i++) {
            bv[i] = (i % 5) * 0.5f;
            h.segment(b).setAtIndex(ValueLayout.JAVA_FLOAT, i, bv[i]);
        }
        h.launch(k, new long[] {n, m}, null, List.of(new KernelArg.Buffer(a), new KernelArg.Buffer(b), new KernelArg.Buffer(c),
                KernelArg.Scalar.i32(m), KernelArg.Scalar.i32(n), KernelArg.Scalar.i32(kk)));
        for (int row = 0; row < m; row++) {
            for (int col = 0; col < n; col++) {
                float want = 0;
                for (int t = 0; t < kk; t++) {
                    want += av[row * kk + t] * bv[t * n + col];
                }
                assertEquals(want, h.segment(c).getAtIndex(ValueLayout.JAVA_FLOAT, (long) row * n + col), 0f, row + "," + col);
            }
        }
    }

    @Test
    void localMemoryBeyondTheDeviceLimitAndHugeSpillsAreRefused() {
        Assumptions.assumeTrue(h.available(), "cpu backend unavailable");
        Device d = h.device;
        assertEquals(IrValidator.MAX_LOCAL_BYTES, d.info().localMemoryBytes());
        // 1024 items x 40 spilled i64 = 320 KiB per group: more than the cpu keeps on a thread's stack
        List<Stmt> body = new ArrayList<>();
        Expr sum = i64(0);
        for (int v = 0; v < 40; v++) {
            body.add(let("v" + v, add(gid(0), i64(v))));
            sum = add(sum, var("v" + v));
        }
        body.add(new Stmt.Barrier());
        body.add(store("out", gid(0), sum));
        IrKernel spill = new IrKernel("spill", List.of(new IrParam.Buffer("out", DType.I64, Access.WRITE, null)), 1,
                List.of(1024L), body);
        ArraydException e = assertThrows(ArraydException.class,
                () -> h.backend.compiler().compile(KernelSource.ir(new IrModule(List.of(spill)))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().contains("across barriers") && e.getMessage().contains("spill"), e::getMessage);
    }

    /**
     * c = a (m x k) * b (k x n) in 16 x 16 tiles staged through local memory; m, n, k multiples of 16
     * (the grid is n x m, so every item has an element).
     */
    static IrKernel tiledMatmul() {
        Expr lx = lid(0);
        Expr ly = lid(1);
        Expr n = cast(IrType.I64, param("n"));
        Expr k = cast(IrType.I64, param("k"));
        Expr m = cast(IrType.I64, param("m"));
        return new IrKernel("tiled", List.of(
                new IrParam.Buffer("a", DType.F32, Access.READ, mul(m, k)),
                new IrParam.Buffer("b", DType.F32, Access.READ, mul(k, n)),
                new IrParam.Buffer("c", DType.F32, Access.WRITE, mul(m, n)),
                new IrParam.Scalar("m", DType.I32, 0L, 8192L),
                new IrParam.Scalar("n", DType.I32, 0L, 8192L),
                new IrParam.Scalar("k", DType.I32, 0L, 8192L)),
                2, List.of(16L, 16L), List.of(
                new Stmt.LocalArray("ta", DType.F32, 256),
                new Stmt.LocalArray("tb", DType.F32, 256),
                let("row", gid(1)),
                let("col", gid(0)),
                mut("acc", f32(0)),
                loop("t", i64(0), bin(Expr.Binary.Op.DIV, k, i64(16)),
                        store("ta", add(mul(ly, i64(16)), lx), load("a", add(mul(var("row"), k), add(mul(var("t"), i64(16)), lx)))),
                        store("tb", add(mul(ly, i64(16)), lx), load("b", add(mul(add(mul(var("t"), i64(16)), ly), n), var("col")))),
                        new Stmt.Barrier(),
                        loop("e", i64(0), i64(16),
                                accVar("acc", Stmt.Accumulate.Op.ADD,
                                        mul(load("ta", add(mul(ly, i64(16)), var("e"))), load("tb", add(mul(var("e"), i64(16)), lx))))),
                        new Stmt.Barrier()),
                when(and(lt(var("row"), m), lt(var("col"), n)), store("c", add(mul(var("row"), n), var("col")), var("acc")))));
    }
}
