package dev.arrayd.devices.api.ir;

import static dev.arrayd.devices.api.ir.IrDsl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which kernels get a lane form, what runs per lane in it, and how the C renderer writes it. */
class LaneBlocksTest {

    private static CheckedKernel checked(IrKernel k) {
        return IrValidator.check(new IrModule(List.of(k)), "ir").getFirst();
    }

    private static LaneBlocks.Plan plan(IrKernel k, LaneBlocks.Rule rule) {
        CheckedKernel c = checked(k);
        return LaneBlocks.plan(c, GuardHoisting.plan(c), rule);
    }

    /** x (n elements, read-write), a scalar n, a 1-d grid; {@code body} inside {@code if (gid(0) < n)}. */
    private static IrKernel bounded(Stmt... body) {
        return new IrKernel("k", List.of(new IrParam.Buffer("x", DType.F32, Access.READ_WRITE, mul(param("n"), param("n"))),
                new IrParam.Scalar("n", DType.I64, 0L, 4096L)), 1, List.of(), List.of(
                let("i", gid(0)), when(lt(var("i"), param("n")), body)));
    }

    @Test
    void theNaiveMatmulRunsItsItemLoopInsideItsOwnLoop() {
        LaneBlocks.Plan p = plan(IrSamples.matmul(), LaneBlocks.Rule.AUTO);
        assertNotNull(p, "a loop over k with b read at consecutive columns");
        // row is uniform (dimension 1); col, acc and the stores vary
        assertEquals(Set.of("col", "acc"), p.arrays());
        String c = new CRenderer().render(List.of(checked(IrSamples.matmul())));
        int lanes = c.indexOf("ARRAYD_KERNEL void arrayd_lanes_matmul(");
        assertTrue(lanes > 0, c);
        String form = c.substring(lanes);
        assertTrue(form.contains("const arrayd_i64 v_row = arrayd_global_id(1);"), "row once per block");
        assertTrue(form.contains("for (arrayd_i64 v_kk"), "the k loop at block level");
        int kk = form.indexOf("for (arrayd_i64 v_kk");
        assertTrue(form.indexOf("for (int arrayd_l = 0; arrayd_l < 16; arrayd_l++)", kk) > kk, "a lane loop inside it");
        assertFalse(form.contains("arrayd_ld_"), "no guard in the lane form");
        assertFalse(form.contains("if ("), "the hoisted bounds test is taken as true");
    }

    @Test
    void kernelsWithoutALoopOrWithStridedAccessesKeepTheirItemFormUnderAuto() {
        assertNull(plan(IrSamples.saxpy(), LaneBlocks.Rule.AUTO), "no loop: gcc vectorizes the item loop already");
        // a row sum per item: x[i * n + j] is n elements apart from lane to lane
        IrKernel rows = bounded(mut("s", f32(0)),
                loop("j", i64(0), param("n"), accVar("s", Stmt.Accumulate.Op.ADD, load("x", add(mul(var("i"), param("n")), var("j"))))),
                store("x", var("i"), var("s")));
        assertNull(plan(rows, LaneBlocks.Rule.AUTO));
        assertNotNull(plan(rows, LaneBlocks.Rule.ALWAYS), "correct, only not worth it");
        // a column sum per item: x[j * n + i] is consecutive from lane to lane
        IrKernel columns = bounded(mut("s", f32(0)),
                loop("j", i64(0), param("n"), accVar("s", Stmt.Accumulate.Op.ADD, load("x", add(mul(var("j"), param("n")), var("i"))))),
                store("x", var("i"), var("s")));
        assertNotNull(plan(columns, LaneBlocks.Rule.AUTO));
        assertNull(plan(columns, LaneBlocks.Rule.OFF));
    }

    @Test
    void aVariableAssignedUnderAVaryingConditionVariesFromItsDeclaration() {
        // m starts uniform (0) and is assigned only where x[j * n + i] > 0: per lane, so an array from its let on
        IrKernel k = bounded(mut("m", f32(0)), mut("u", f32(1)),
                loop("j", i64(0), param("n"),
                        new Stmt.If(bin(Expr.Binary.Op.GT, load("x", add(mul(var("j"), param("n")), var("i"))), f32(0)),
                                List.of(new Stmt.Assign("m", f32(2))), List.of()),
                        new Stmt.Assign("u", f32(3))),
                store("x", var("i"), add(var("m"), var("u"))));
        LaneBlocks.Plan p = plan(k, LaneBlocks.Rule.AUTO);
        assertNotNull(p);
        assertEquals(Set.of("i", "m"), p.arrays(), "u is assigned the same value in every lane");
        Stmt.If bounds = (Stmt.If) k.body().get(1);
        assertTrue(p.inLane(bounds.thenBody().get(0)), "let m");
        assertFalse(p.inLane(bounds.thenBody().get(1)), "let u");
        Stmt.For loop = (Stmt.For) bounds.thenBody().get(2);
        assertTrue(p.inLane(loop.body().get(0)), "the varying if runs whole per lane");
        assertFalse(p.inLane(loop.body().get(1)), "assign u once per block");
        assertFalse(p.inLane(loop));
    }

    @Test
    void aLoopWithVaryingBoundsRunsWholePerLaneAndIsNotWorthItUnderAuto() {
        IrKernel k = bounded(mut("s", f32(0)),
                loop("j", i64(0), param("n"),
                        loop("q", i64(0), var("i"), accVar("s", Stmt.Accumulate.Op.ADD, f32(1)))),
                store("x", var("i"), var("s")));
        assertNull(plan(k, LaneBlocks.Rule.AUTO));
        LaneBlocks.Plan p = plan(k, LaneBlocks.Rule.ALWAYS);
        assertNotNull(p);
        Stmt.For outer = (Stmt.For) ((Stmt.If) k.body().get(1)).thenBody().get(1);
        assertFalse(p.inLane(outer));
        assertTrue(p.inLane(outer.body().getFirst()));
        assertFalse(p.arrays().contains("q"), "declared inside the lane loop");
    }

    @Test
    void noLaneFormForGuardsCheckedPerAccessOrForPhasedKernels() {
        // x[x[i]]: a loaded index keeps its guard per access
        IrKernel gather = bounded(mut("s", f32(0)),
                loop("j", i64(0), param("n"), accVar("s", Stmt.Accumulate.Op.ADD,
                        load("x", cast(IrType.I64, load("x", add(mul(var("j"), param("n")), var("i"))))))),
                store("x", var("i"), var("s")));
        assertNull(plan(gather, LaneBlocks.Rule.ALWAYS));
        assertNull(plan(IrSamples.tiledMatmul(), LaneBlocks.Rule.ALWAYS));
        assertNull(new CRenderer(LaneBlocks.Rule.ALWAYS).lanes(checked(IrSamples.groupSum())));
    }

    @Test
    void localAndGroupIdsOfDimensionZeroVaryAcrossLanes() {
        IrKernel k = new IrKernel("ids", List.of(new IrParam.Buffer("x", DType.I64, Access.WRITE, i64(4096))), 1, List.of(),
                List.of(let("i", gid(0)), when(lt(var("i"), i64(4096)),
                        store("x", var("i"), add(lid(0), group(0))))));
        LaneBlocks.Plan p = plan(k, LaneBlocks.Rule.ALWAYS);
        assertNotNull(p);
        String c = new CRenderer(LaneBlocks.Rule.ALWAYS).render(List.of(checked(k)));
        String form = c.substring(c.indexOf("arrayd_lanes_ids("));
        assertTrue(form.contains("((arrayd_global_id(0) + arrayd_l) % arrayd_local_size(0))"), form);
        assertTrue(form.contains("((arrayd_global_id(0) + arrayd_l) / arrayd_local_size(0))"), form);
    }

    /** The lanes' differential suite keeps the random kernels with a lane form: it finds them in a few draws. */
    @Test
    void aRandomKernelInTenHasALaneFormUnderAlways() {
        int lanes = 0;
        int tries = 200;
        for (long seed = 0; seed < tries; seed++) {
            IrKernel k = RandomIrKernels.kernel(seed, false);
            if (plan(k, LaneBlocks.Rule.ALWAYS) != null) {
                lanes++;
            }
        }
        assertTrue(lanes >= tries / 10, lanes + " of " + tries);
    }
}
