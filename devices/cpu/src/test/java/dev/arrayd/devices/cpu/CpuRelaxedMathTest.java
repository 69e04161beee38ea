package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.ir.Expr;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.IrParam;
import dev.arrayd.devices.api.ir.Stmt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static dev.arrayd.devices.api.ir.IrDsl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A kernel that allows relaxed floating point ({@link IrKernel#relaxedMath()}) is compiled with gcc's reassociation
 * and contraction for it alone (its function and its trampoline, into which it inlines), is a different cache entry
 * from the same kernel without it, and computes the same sums up to rounding; a strict kernel keeps the IR's exact
 * order, bit for bit.
 */
class CpuRelaxedMathTest {

    private static final int CHUNK = 1024;
    private static final int ITEMS = 64;

    @RegisterExtension
    static final SharedCpuIrHarness SHARED = new SharedCpuIrHarness();

    private static CpuIrHarness h() {
        return SHARED.get();
    }

    /** Work-item i sums x[i * CHUNK .. (i + 1) * CHUNK) into partial[i], in order. */
    private static IrKernel chunkSum(String name, boolean relaxed) {
        return new IrKernel(name, List.of(
                new IrParam.Buffer("x", DType.F32, Access.READ, i64((long) CHUNK * ITEMS)),
                new IrParam.Buffer("partial", DType.F32, Access.WRITE, i64(ITEMS))), 1, List.of(), List.of(
                mut("s", f32(0)),
                loop("j", i64(0), i64(CHUNK),
                        accVar("s", Stmt.Accumulate.Op.ADD, load("x", add(mul(gid(0), i64(CHUNK)), var("j"))))),
                store("partial", gid(0), var("s"))), relaxed);
    }

    private static CpuKernelCompiler compiler() {
        return (CpuKernelCompiler) h().backend.compiler();
    }

    @Test
    void onlyTheRelaxedKernelAndItsTrampolineAreMarked() {
        String unit = compiler().translationUnit(KernelSource.ir(new IrModule(List.of(
                chunkSum("strict_sum", false), chunkSum("relaxed_sum", true))))).source();
        assertTrue(unit.contains("ARRAYD_RELAXED ARRAYD_KERNEL void arrayd_k_relaxed_sum("), unit);
        assertTrue(unit.contains("ARRAYD_RELAXED void ARRAYD_RUN(relaxed_sum)("), unit);
        assertFalse(unit.contains("ARRAYD_RELAXED ARRAYD_KERNEL void arrayd_k_strict_sum("), unit);
        assertFalse(unit.contains("ARRAYD_RELAXED void ARRAYD_RUN(strict_sum)("), unit);
        assertTrue(unit.contains("#define ARRAYD_RELAXED __attribute__((optimize(\"associative-math\""), unit);
    }

    /** {@code y[i] = exp(x[i])} for i < n: a kernel that calls the math library. */
    private static IrKernel expOf(String name, boolean relaxed) {
        return new IrKernel(name, List.of(
                new IrParam.Buffer("x", DType.F32, Access.READ, param("n")),
                new IrParam.Buffer("y", DType.F32, Access.WRITE, param("n")),
                new IrParam.Scalar("n", DType.I64, 0L, 1L << 30)), 1, List.of(), List.of(
                let("i", gid(0)),
                when(lt(var("i"), param("n")),
                        store("y", var("i"), new Expr.Unary(Expr.Unary.Op.EXP, load("x", var("i")))))), relaxed);
    }

    /**
     * A kernel calling the math library is marked narrow (256-bit vectors at most on x86-64, see CRenderer#NARROW),
     * with its trampolines, relaxed or not; a kernel without such calls is not; and the marked kernels run.
     */
    @Test
    void aKernelCallingTheMathLibraryIsMarkedNarrowWithItsTrampolines() throws Exception {
        String unit = compiler().translationUnit(KernelSource.ir(new IrModule(List.of(
                expOf("expo", false), expOf("expo_relaxed", true), chunkSum("plain", false))))).source();
        assertTrue(unit.contains("ARRAYD_NARROW ARRAYD_KERNEL void arrayd_k_expo("), unit);
        assertTrue(unit.contains("ARRAYD_NARROW void ARRAYD_RUN(expo)("), unit);
        assertTrue(unit.contains("ARRAYD_RELAXED ARRAYD_NARROW ARRAYD_KERNEL void arrayd_k_expo_relaxed("), unit);
        assertTrue(unit.contains("ARRAYD_RELAXED ARRAYD_NARROW void ARRAYD_RUN(expo_relaxed)("), unit);
        assertFalse(unit.contains("ARRAYD_NARROW ARRAYD_KERNEL void arrayd_k_plain("), unit);
        assertFalse(unit.contains("ARRAYD_NARROW void ARRAYD_RUN(plain)("), unit);
        List<Kernel> ks = h().compile(expOf("expo", false), expOf("expo_relaxed", true));
        int n = 1000;
        h().reset();
        MemRef x = h().alloc(4L * n);
        MemRef y = h().alloc(4L * n);
        for (int i = 0; i < n; i++) {
            h().segment(x).setAtIndex(ValueLayout.JAVA_FLOAT, i, (i % 40) * 0.25f - 5f);
        }
        for (Kernel k : ks) {
            h().launch(k, new long[] {n}, null, List.of(new KernelArg.Buffer(x),
                    new KernelArg.Buffer(y), KernelArg.Scalar.i64(n)));
            for (int i = 0; i < n; i++) {
                float want = (float) Math.exp((i % 40) * 0.25f - 5f);
                assertEquals(want, h().segment(y).getAtIndex(ValueLayout.JAVA_FLOAT, i), Math.ulp(want) * 4,
                        k.name() + " y[" + i + "]");
            }
        }
    }

    @Test
    void aRelaxedKernelIsCachedApartFromTheStrictOne() {
        var strict = compiler().translationUnit(KernelSource.ir(new IrModule(List.of(chunkSum("sum", false)))));
        var relaxed = compiler().translationUnit(KernelSource.ir(new IrModule(List.of(chunkSum("sum", true)))));
        assertNotEquals(KernelCache.key(strict.files(), strict.flags(), "gcc", "x86_64"),
                KernelCache.key(relaxed.files(), relaxed.flags(), "gcc", "x86_64"));
    }

    @Test
    void relaxedSumsMatchUpToRoundingAndStrictOnesBitForBit() throws Exception {
        List<Kernel> ks = h().compile(chunkSum("strict_sum", false), chunkSum("relaxed_sum", true));
        MemRef x = h().alloc(4L * CHUNK * ITEMS);
        MemRef strictOut = h().alloc(4L * ITEMS);
        MemRef relaxedOut = h().alloc(4L * ITEMS);
        MemorySegment xs = h().segment(x);
        for (int i = 0; i < CHUNK * ITEMS; i++) {
            // magnitudes spread over six decades, so the order of the additions shows in the last bits
            xs.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) ((i % 13 - 6) * Math.pow(10, i % 6 - 3)) + 0.1f);
        }
        h().launch(ks.get(0), new long[] {ITEMS}, null, List.of(new KernelArg.Buffer(x), new KernelArg.Buffer(strictOut)));
        h().launch(ks.get(1), new long[] {ITEMS}, null, List.of(new KernelArg.Buffer(x), new KernelArg.Buffer(relaxedOut)));
        for (int item = 0; item < ITEMS; item++) {
            float inOrder = 0;
            double exact = 0;
            double magnitude = 0;
            for (int j = 0; j < CHUNK; j++) {
                float v = xs.getAtIndex(ValueLayout.JAVA_FLOAT, (long) item * CHUNK + j);
                inOrder += v;
                exact += v;
                magnitude += Math.abs(v);
            }
            assertEquals(inOrder, h().segment(strictOut).getAtIndex(ValueLayout.JAVA_FLOAT, item), 0f,
                    "strict item " + item);
            // any order of CHUNK float additions is within CHUNK ulps of the magnitude of the exact sum
            assertEquals(exact, h().segment(relaxedOut).getAtIndex(ValueLayout.JAVA_FLOAT, item),
                    CHUNK * Math.ulp((float) magnitude), "relaxed item " + item);
        }
    }
}
