package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.ir.Expr;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrParam;
import dev.arrayd.devices.api.ir.Stmt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static dev.arrayd.devices.api.ir.IrDsl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code if} conditions checked once per block of work-items (GuardHoisting's conditions) give the same results
 * as testing them per work-item: over a grid split into blocks, bands {@code [lo, hi)} that cover every block,
 * cut through blocks, miss every block or are empty; with an {@code else} branch (a block where the condition
 * holds never runs it, the others do per item), and inside a loop whose variable the condition uses.
 */
class CpuHoistedConditionTest {

    /** Over {@code StreamExecutor.SPLIT_THRESHOLD}: the launch runs in several blocks, each checked on its own. */
    private static final int N = 100_003;

    @RegisterExtension
    static final SharedCpuIrHarness SHARED = new SharedCpuIrHarness();

    private static CpuIrHarness h() {
        return SHARED.get();
    }

    /** band[i] = 1 when lo <= i < hi, else 2. */
    private static IrKernel band() {
        Expr i = var("i");
        Stmt inBand = new Stmt.If(and(bin(Expr.Binary.Op.GE, i, param("lo")), lt(i, param("hi"))),
                List.of(store("band", i, i32(1))), List.of(store("band", i, i32(2))));
        return new IrKernel("band", List.of(
                new IrParam.Buffer("band", DType.I32, Access.WRITE, null),
                new IrParam.Scalar("lo", DType.I64, null, null),
                new IrParam.Scalar("hi", DType.I64, null, null)), 1, List.of(), List.of(let("i", gid(0)), inBand));
    }

    /** near[i] = how many of i, i + 1, i + 2, i + 3 are below hi: a condition on a loop variable. */
    private static IrKernel near() {
        Expr i = var("i");
        Stmt count = loop("j", i64(0), i64(4), when(lt(add(i, var("j")), param("hi")), accVar("c", Stmt.Accumulate.Op.ADD, i32(1))));
        return new IrKernel("near", List.of(
                new IrParam.Buffer("near", DType.I32, Access.WRITE, null),
                new IrParam.Scalar("hi", DType.I64, null, null)), 1, List.of(), List.of(
                let("i", gid(0)), mut("c", i32(0)), count, store("near", i, var("c"))));
    }

    @Test
    void bandsThroughBlocksAcrossBlocksAndNowhereMatchPerItemTests() throws Exception {
        // a harness of its own: a grid this large starts the device's worker threads, which end with it
        try (CpuIrHarness own = new CpuIrHarness()) {
            bands(own);
        }
    }

    private static void bands(CpuIrHarness own) throws Exception {
        List<Kernel> ks = own.compile(band(), near());
        List<long[]> bands = new java.util.ArrayList<>(List.of(new long[][] {{0, N}, {N / 3, 2L * N / 3 + 7}, {5, 5},
                {0, 0}, {N - 1, N + 5}, {-20, 12_345}, {N + 10, N + 20}, {Long.MIN_VALUE, Long.MAX_VALUE}}));
        // bands ending and starting at each block's last and first item and one beside: an off-by-one in the
        // per-block check shows there
        long[] chunks = new long[StreamExecutor.CHUNKS_PER_THREAD * own.device.threads() * GridSplitter.CHUNK_LONGS];
        int parts = GridSplitter.split(new long[] {N, 1, 1}, StreamExecutor.CHUNKS_PER_THREAD * own.device.threads(), chunks);
        for (int p = 0; p < parts; p++) {
            long first = chunks[p * GridSplitter.CHUNK_LONGS];
            long last = chunks[p * GridSplitter.CHUNK_LONGS + 3] - 1;
            for (long d = -1; d <= 1; d++) {
                bands.add(new long[] {0, last + d});
                bands.add(new long[] {0, last + 3 + d}); // near's greatest i + j in the block is last + 3
                bands.add(new long[] {first + d, N});
            }
        }
        for (long[] b : bands) {
            own.reset();
            MemRef band = own.alloc(4L * N);
            MemRef near = own.alloc(4L * N);
            own.launch(ks.get(0), new long[] {N}, null, List.of(new KernelArg.Buffer(band), KernelArg.Scalar.i64(b[0]),
                    KernelArg.Scalar.i64(b[1])));
            own.launch(ks.get(1), new long[] {N}, null, List.of(new KernelArg.Buffer(near), KernelArg.Scalar.i64(b[1])));
            MemorySegment bs = own.segment(band);
            MemorySegment ns = own.segment(near);
            for (int i = 0; i < N; i++) {
                int wantBand = i >= b[0] && i < b[1] ? 1 : 2;
                int wantNear = 0;
                for (int j = 0; j < 4; j++) {
                    wantNear += i + j < b[1] ? 1 : 0;
                }
                assertEquals(wantBand, bs.getAtIndex(ValueLayout.JAVA_INT, i), "band[" + i + "] for [" + b[0] + ", " + b[1] + ")");
                assertEquals(wantNear, ns.getAtIndex(ValueLayout.JAVA_INT, i), "near[" + i + "] for hi " + b[1]);
            }
        }
    }

    @Test
    void theConditionsAreTheOnesCheckedPerBlock() {
        String unit = ((CpuKernelCompiler) h().backend.compiler()).translationUnit(
                dev.arrayd.devices.api.KernelSource.ir(new dev.arrayd.devices.api.ir.IrModule(List.of(band(), near())))).source();
        assertTrue(unit.contains("if (arrayd_ok || (((arrayd_i32)(v_i >= p_lo)) && ((arrayd_i32)(v_i < p_hi)))) {"), unit);
        assertTrue(unit.contains("if (arrayd_ok || ((arrayd_i32)(((arrayd_i64)((arrayd_u64)v_i + (arrayd_u64)v_j)) < p_hi))) {"),
                unit);
    }
}
