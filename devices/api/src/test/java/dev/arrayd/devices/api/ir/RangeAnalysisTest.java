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

    /**
     * out[y * w + x] = a[(y + 1) * w + x - w - extra] over a w x h grid, a holding (h + 1) * w elements: the
     * subtraction is proven not negative through the symbolic lower bound (y + 1) * w + x >= w, but not once it
     * takes one more.
     */
    private static IrKernel rowAbove(long extra) {
        var f32 = dev.arrayd.devices.api.DType.F32;
        Expr w = IrDsl.param("w");
        Expr h = IrDsl.param("h");
        Expr x = IrDsl.var("x");
        Expr y = IrDsl.var("y");
        return new IrKernel("row_above", List.of(
                new IrParam.Buffer("a", f32, dev.arrayd.devices.api.Access.READ, IrDsl.mul(IrDsl.add(h, IrDsl.i64(1)), w)),
                new IrParam.Buffer("out", f32, dev.arrayd.devices.api.Access.WRITE, IrDsl.mul(h, w)),
                new IrParam.Scalar("w", dev.arrayd.devices.api.DType.I64, 1L, 1L << 20),
                new IrParam.Scalar("h", dev.arrayd.devices.api.DType.I64, 1L, 1L << 20)), 2, List.of(), List.of(
                IrDsl.let("x", IrDsl.gid(0)),
                IrDsl.let("y", IrDsl.gid(1)),
                IrDsl.when(IrDsl.and(IrDsl.lt(x, w), IrDsl.lt(y, h)),
                        IrDsl.let("c", IrDsl.add(IrDsl.mul(IrDsl.add(y, IrDsl.i64(1)), w), x)),
                        IrDsl.store("out", IrDsl.add(IrDsl.mul(y, w), x),
                                IrDsl.load("a", IrDsl.sub(IrDsl.sub(IrDsl.var("c"), w), IrDsl.i64(extra)))))));
    }

    @Test
    void aSubtractionIsProvenThroughSymbolicLowerBoundsAndOnlyWhenTheyHold() {
        CheckedKernel above = check(rowAbove(0));
        assertEquals(0, above.guardsEmitted(), "a[c - w]: c >= w and c - w <= h * w - 1");
        CheckedKernel beyond = check(rowAbove(1));
        assertEquals(1, beyond.guardsEmitted(), "a[c - w - 1] is -1 at x = y = 0: guarded");
    }

    @Test
    void anExtentStatedInTheGridsSizeProvesTheWorkItemsOwnIndexAndIsCheckedAtLaunch() {
        Expr size = new Expr.Builtin(Expr.Builtin.Kind.GLOBAL_SIZE, 0);
        IrKernel k = new IrKernel("fill_grid", List.of(new IrParam.Buffer("o", dev.arrayd.devices.api.DType.F32,
                dev.arrayd.devices.api.Access.WRITE, size)), 1, List.of(), List.of(
                IrDsl.store("o", IrDsl.gid(0), IrDsl.f32(1))));
        CheckedKernel checked = check(k);
        assertEquals(0, checked.guardsEmitted(), "o[gid] with min_extent = global_size(0)");
        checked.checkLaunch(new long[] {10}, null, new long[1], new boolean[1], new long[] {10},
                dev.arrayd.devices.api.support.LaunchGrid.Names.SPI, "args");
        var small = org.junit.jupiter.api.Assertions.assertThrows(dev.arrayd.devices.api.ArraydException.class,
                () -> checked.checkLaunch(new long[] {10}, null, new long[1], new boolean[1], new long[] {9},
                        dev.arrayd.devices.api.support.LaunchGrid.Names.SPI, "args"));
        assertEquals("args[0]: buffer of 9 elements for o (expected: at least 10, its declared min_extent)",
                small.getMessage());
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
