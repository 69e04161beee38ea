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
        // row is uniform (dimension 1); acc and the stores vary; col is the lane's own id, written out where read
        assertEquals(Set.of("acc"), p.arrays());
        assertEquals(Set.of("col"), p.derived().keySet());
        assertFalse(p.laneMajor(), "b is read at consecutive columns: one array per variable");
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
        assertFalse(form.contains("v_col"), "col is never stored");
        assertTrue(form.contains("(arrayd_global_id(0) + arrayd_l)"), form);
    }

    @Test
    void aBlockPerItemReadAtAStrideRunsLaneMajor() {
        LaneBlocks.Plan p = plan(IrSamples.blockMatmul(2, 8), LaneBlocks.Rule.AUTO);
        assertNotNull(p, "b read 8 elements apart from lane to lane, 16 sums per lane");
        assertTrue(p.laneMajor());
        assertEquals(Set.of("col"), p.derived().keySet());
        String c = new CRenderer().render(List.of(checked(IrSamples.blockMatmul(2, 8))));
        String form = c.substring(c.indexOf("ARRAYD_KERNEL void arrayd_lanes_block_matmul("));
        int struct = form.indexOf("    struct {\n");
        assertTrue(struct > 0, form);
        String fields = form.substring(struct, form.indexOf("} arrayd_v[16];", struct));
        assertTrue(fields.contains("float v_c0_0;\n        float v_c0_1;"), "the sums, consecutive: " + fields);
        assertFalse(fields.contains("v_b0"), "b0 is used only by the lane loop that loads it");
        assertTrue(form.contains("arrayd_v[arrayd_l].v_c1_7 = (arrayd_v[arrayd_l].v_c1_7 + (v_a1 * v_b7));"), form);
        assertTrue(form.contains("const float v_b0 = "), "a plain local of the lane loop");
        // a 1 x 8 block carries 8 sums per lane: gcc would vectorize across the lanes and shuffle every load
        assertNull(plan(IrSamples.blockMatmul(1, 8), LaneBlocks.Rule.AUTO));
        LaneBlocks.Plan forced = plan(IrSamples.blockMatmul(1, 8), LaneBlocks.Rule.ALWAYS);
        assertNotNull(forced);
        assertTrue(forced.laneMajor());
        // a stride past 16 elements: no lane form by default
        assertNull(plan(IrSamples.blockMatmul(2, 32), LaneBlocks.Rule.AUTO));
    }

    @Test
    void onlyValuesComputedFromIdsParametersAndUniformImmutablesAreDerived() {
        // j = i * 2 (derived); v = x[i] (a load: kept); w = i + s where s is mutable (kept); z = j + 1 (derived from j)
        IrKernel k = bounded(mut("s", f32(0)),
                let("j", mul(var("i"), i64(2))),
                let("z", add(var("j"), i64(1))),
                let("v", load("x", var("i"))),
                loop("q", i64(0), param("n"), accVar("s", Stmt.Accumulate.Op.ADD, load("x", add(mul(var("q"), param("n")), var("i"))))),
                let("w", add(cast(IrType.I64, var("s")), var("i"))),
                store("x", var("i"), add(var("v"), cast(IrType.F32, add(var("w"), var("z"))))));
        LaneBlocks.Plan p = plan(k, LaneBlocks.Rule.ALWAYS);
        assertNotNull(p);
        assertEquals(Set.of("i", "j", "z"), p.derived().keySet());
        assertTrue(p.arrays().containsAll(Set.of("s", "v", "w")), p.arrays().toString());
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
        assertEquals(Set.of("m"), p.arrays(), "u is assigned the same value in every lane; i is derived");
        assertEquals(Set.of("i"), p.derived().keySet());
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
