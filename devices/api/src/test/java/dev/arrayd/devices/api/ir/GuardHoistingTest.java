package dev.arrayd.devices.api.ir;

import static dev.arrayd.devices.api.ir.IrDsl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Which guarded accesses are checked per block of work-items, and what the C renderer makes of them. */
class GuardHoistingTest {

    private static CheckedKernel guarded(IrKernel k) {
        return IrValidator.check(new IrModule(List.of(k)), "ir").getFirst().withAllGuards();
    }

    private static Set<String> dims(GuardHoisting.Plan p) {
        return p.accesses().stream().flatMap(a -> a.index().coefficients().keySet().stream()).collect(Collectors.toSet());
    }

    private static IrKernel withBody(Stmt... body) {
        return new IrKernel("k", List.of(new IrParam.Buffer("x", DType.F32, Access.READ_WRITE, param("n")),
                new IrParam.Scalar("n", DType.I64, 0L, 1L << 40)), 1, List.of(), List.of(body));
    }

    @Test
    void comparisonsOfAffineExpressionsAreHoistedAsConditions() {
        CheckedKernel proven = IrValidator.check(new IrModule(List.of(IrSamples.vaddProven())), "ir").getFirst();
        GuardHoisting.Plan p = GuardHoisting.plan(proven);
        assertTrue(p.accesses().isEmpty(), "every access proven");
        assertEquals(1, p.conditions().size(), "the bounds test i < n");
        GuardHoisting.Comparison c = p.conditions().getFirst().parts().getFirst();
        assertTrue(c.strict());
        assertEquals(Set.of("#g0"), c.left().coefficients().keySet());
        assertTrue(c.right().invariant());
        // a conjunction, with > and <= turned around: all parts
        GuardHoisting.Plan both = GuardHoisting.plan(IrValidator.check(new IrModule(List.of(withBody(
                when(and(lt(gid(0), param("n")), bin(Expr.Binary.Op.GT, gid(0), i64(2))),
                        store("x", gid(0), f32(1)))))), "ir").getFirst());
        assertEquals(1, both.conditions().size());
        List<GuardHoisting.Comparison> parts = both.conditions().getFirst().parts();
        assertEquals(2, parts.size());
        assertTrue(parts.get(1).left().invariant() && parts.get(1).strict(), "2 < gid(0)");
    }

    @Test
    void conditionsOnLoadsMutableVariablesFloatsOrOnlyInvariantsStayPerItem() {
        for (Stmt s : List.of(
                when(lt(cast(IrType.I64, load("x", i64(0))), param("n")), store("x", i64(0), f32(1))),
                when(bin(Expr.Binary.Op.LT, load("x", i64(0)), f32(0)), store("x", i64(0), f32(1))),
                when(lt(i64(3), param("n")), store("x", i64(0), f32(1))),
                when(bin(Expr.Binary.Op.EQ, gid(0), i64(0)), store("x", i64(0), f32(1))))) {
            GuardHoisting.Plan p = GuardHoisting.plan(IrValidator.check(new IrModule(List.of(withBody(s))), "ir").getFirst());
            assertTrue(p.conditions().isEmpty(), s.toString());
        }
        GuardHoisting.Plan mutable = GuardHoisting.plan(IrValidator.check(new IrModule(List.of(withBody(
                mut("m", gid(0)), when(lt(var("m"), param("n")), store("x", i64(0), f32(1)))))), "ir").getFirst());
        assertTrue(mutable.conditions().isEmpty(), "a mutable variable");
    }

    @Test
    void affineIndexesOverGlobalIdsAndLoopVariablesAreHoisted() {
        GuardHoisting.Plan vadd = GuardHoisting.plan(guarded(IrSamples.vaddGuarded()));
        assertEquals(3, vadd.accesses().size(), "x, y and out through the let i = gid(0)");
        assertEquals(Set.of("#g0"), dims(vadd));
        assertTrue(vadd.loops().isEmpty());

        GuardHoisting.Plan matmul = GuardHoisting.plan(guarded(IrSamples.matmul()));
        assertEquals(List.of("a", "b", "c"), matmul.accesses().stream().map(GuardHoisting.Access::array).sorted().toList());
        assertEquals(Set.of("#g0", "#g1", "kk"), dims(matmul));
        assertEquals(List.of("kk"), matmul.loops().stream().map(GuardHoisting.LoopRange::var).toList());
    }

    @Test
    void loopsWithBoundsFixedForTheLaunchAreDimsAndOthersAreNot() {
        IrKernel k = new IrKernel("loops", List.of(new IrParam.Buffer("out", DType.F32, Access.WRITE, null),
                new IrParam.Scalar("n", DType.I64, 0L, 4096L)), 1, List.of(), List.of(
                new Stmt.For("j", i64(0), param("n"), 3, List.of(store("out", add(gid(0), var("j")), f32(1)))),
                // bounds that differ between work-items: the variable is no dim, the access keeps its guard
                loop("u", i64(0), lid(0), store("out", add(gid(0), var("u")), f32(2)))));
        GuardHoisting.Plan p = GuardHoisting.plan(guarded(k));
        assertEquals(1, p.accesses().size());
        assertEquals(Set.of("#g0", "j"), dims(p));
    }

    @Test
    void indexesThatAreNotAffineWithFixedCoefficientsKeepTheirGuards() {
        IrKernel k = new IrKernel("mixed", List.of(
                new IrParam.Buffer("idx", DType.I64, Access.READ, null),
                new IrParam.Buffer("x", DType.F32, Access.READ, null),
                new IrParam.Buffer("out", DType.F32, Access.WRITE, null)),
                1, List.of(), List.of(
                let("i", gid(0)),
                mut("j", i64(0)),
                // through a loaded value: gather
                store("out", var("i"), load("x", load("idx", var("i")))),
                // a product of two varying terms
                store("out", mul(var("i"), var("i")), f32(1)),
                // a mutable variable
                store("out", var("j"), f32(2)),
                // a local id
                store("out", lid(0), f32(3))));
        GuardHoisting.Plan p = GuardHoisting.plan(guarded(k));
        // hoisted: idx[i] and out[i] of the first store; x[idx[i]], out[i*i], out[j] and out[lid] keep their guards
        assertEquals(2, p.accesses().size(), () -> p.accesses().toString());
        assertEquals(List.of("idx", "out"), p.accesses().stream().map(GuardHoisting.Access::array).sorted().toList());
    }

    @Test
    void theCRendererGivesHoistingKernelsAnOkFlagAndAPredicateAndOthersNeither() {
        CheckedKernel vadd = guarded(IrSamples.vaddGuarded());
        String c = new CRenderer().render(List.of(vadd));
        assertTrue(c.contains("arrayd_i64 *arrayd_guard, const arrayd_i32 arrayd_one, const int arrayd_ok) {"), c);
        assertTrue(c.contains("ARRAYD_FN int arrayd_ok_vadd_guarded(ARRAYD_ITEM, const arrayd_i64 *arrayd_lo, "
                + "const arrayd_i64 *arrayd_hi,"), c);
        assertTrue(c.contains("if (arrayd_ok || (arrayd_u64)arrayd_i < (arrayd_u64)arrayd_ext[2])"), c);
        assertEquals(c, new CRenderer().render(List.of(vadd)), "deterministic");
        // a proven kernel has no guard to hoist, but its bounds test is hoisted
        String proven = new CRenderer().render(IrValidator.check(new IrModule(List.of(IrSamples.vaddProven())), "ir"));
        assertFalse(proven.contains("arrayd_ld_f32(p_"), proven);
        assertTrue(proven.contains("if (arrayd_ok || ((arrayd_i32)(v_i < p_n))) {"), proven);
        // OpenCL: the kernel checks its own work-group with the same predicate, no arrayd_ok parameter; CUDA: unchanged
        String cl = new OpenClRenderer().render(List.of(vadd));
        assertTrue(cl.contains("ARRAYD_FN int arrayd_ok_vadd_guarded(const arrayd_i64 *arrayd_lo, const arrayd_i64 *arrayd_hi, "
                + "const __global float *p_x"), cl);
        assertTrue(cl.indexOf("ARRAYD_FN int arrayd_ok_vadd_guarded(") < cl.indexOf("__kernel void vadd_guarded("), "predicate first");
        assertTrue(cl.contains("if (arrayd_ok_vadd_guarded(arrayd_lo, arrayd_hi, p_x, p_y, p_out, p_n, p_m, arrayd_ext)) {\n"
                + "        const int arrayd_ok = 1;"), cl);
        assertTrue(cl.contains("    } else {\n        const int arrayd_ok = 0;"), cl);
        assertFalse(cl.contains("const int arrayd_ok) {"), "no arrayd_ok parameter");
        assertFalse(new CudaRenderer().render(List.of(vadd)).contains("arrayd_ok"));
        // a kernel with local arrays runs in phases on the cpu: its accesses affine in the global ids, the local ids (its
        // local size is declared) and loop variables are checked once per run of groups too: the tiles' stores and
        // loads, c's store; a and b are read at indexes through the tile loop's variable, whose bound is a let
        // (n64 / 16), so those loads keep their guards
        CheckedKernel tiled = guarded(IrSamples.tiledMatmul());
        GuardHoisting.Plan plan = new CRenderer().hoisting(tiled);
        assertEquals(List.of("c", "ta", "ta", "tb", "tb"),
                plan.accesses().stream().map(GuardHoisting.Access::array).sorted().toList());
        assertEquals(Set.of("#g0", "#g1", "#l0", "#l1", "k"), dims(plan));
        String phased = new CRenderer().render(List.of(tiled));
        assertTrue(phased.contains("arrayd_i64 *arrayd_guard, const arrayd_i32 arrayd_one, const int arrayd_ok) {"), phased);
        assertTrue(phased.contains("ARRAYD_FN int arrayd_ok_tiled_matmul(ARRAYD_ITEM, const arrayd_i64 *arrayd_lo,"), phased);
        assertTrue(phased.contains("arrayd_ld_f32(p_a, "), "a's loads keep their guards\n" + phased);
        assertTrue(phased.contains("b = arrayd_cmul(arrayd_a, 0, &arrayd_ov);")
                && phased.contains("arrayd_c = arrayd_cmul(arrayd_a, 15, &arrayd_ov);"), "local ids over [0, 15]\n" + phased);
    }

    /** A condition on a local id holds for some items of every group: it stays per item, or no block would pass. */
    @Test
    void conditionsOnLocalIdsStayPerItem() {
        IrKernel k = new IrKernel("half", List.of(new IrParam.Buffer("out", DType.F32, Access.WRITE, null)), 1,
                List.of(16L), List.of(when(lt(lid(0), i64(8)), store("out", gid(0), f32(1)))));
        GuardHoisting.Plan p = GuardHoisting.plan(guarded(k));
        assertTrue(p.conditions().isEmpty());
        assertEquals(1, p.accesses().size(), "the store's index, through the global id");
    }
}
