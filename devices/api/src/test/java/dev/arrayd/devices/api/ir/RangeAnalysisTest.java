package dev.arrayd.devices.api.ir;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Which accesses the range analysis proves (no guard emitted) and which keep a guard. */
class RangeAnalysisTest {

    private static CheckedKernel check(IrKernel k) {
        return IrValidator.check(new IrModule(List.of(k)), "").getFirst();
    }

    @Test
    void guardsProvenUnnecessaryAreNotEmitted() {
        CheckedKernel saxpy = check(IrSamples.saxpy());
        assertEquals(0, saxpy.guardsEmitted());
        assertEquals(3, saxpy.guardsElided()); // x[i], y[i] loaded, y[i] stored: i < n <= extent
        CheckedKernel matmul = check(IrSamples.matmul());
        assertEquals(0, matmul.guardsEmitted());
        assertEquals(3, matmul.guardsElided()); // a[row*k + kk] <= m*k - 1, b[kk*n + col], c[row*n + col]
        CheckedKernel groupSum = check(IrSamples.groupSum());
        assertEquals(2, groupSum.guardsEmitted()); // x[gid] and partial[group]: no declared extents
        assertEquals(4, groupSum.guardsElided()); // tile[lid], tile[lid + stride] (lid < stride <= 128) twice, tile[0]
        CheckedKernel gather = check(IrSamples.gatherUnchecked());
        assertEquals(2, gather.guardsEmitted());
        assertEquals(0, gather.guardsElided());
        int elided = saxpy.guardsElided() + matmul.guardsElided() + groupSum.guardsElided() + gather.guardsElided();
        assertEquals(10, elided);
    }

    @Test
    void anIndexThatMayWrapIsNeverProven() {
        // i32 index gid * 2^30 may exceed i32 and wrap; the analysis must not trust its bound
        IrKernel k = new IrKernel("wrap", List.of(new IrParam.Buffer("o", dev.arrayd.devices.api.DType.U8,
                dev.arrayd.devices.api.Access.WRITE, IrDsl.i64(1L << 40))), 1, List.of(), List.of(
                IrDsl.store("o", IrDsl.mul(IrDsl.cast(IrType.I32, IrDsl.gid(0)), IrDsl.i32(1 << 30)), Expr.Const.u8(1))));
        assertEquals(1, check(k).guardsEmitted());
    }
}
