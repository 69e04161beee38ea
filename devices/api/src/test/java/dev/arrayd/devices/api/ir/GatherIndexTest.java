package dev.arrayd.devices.api.ir;

import static dev.arrayd.devices.api.ir.IrDsl.*;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How each dialect writes an index that is not affine: in the CPU's C times {@code arrayd_one}, a 1 gcc cannot see
 * (GCC 12.2's vectorizer gathers through a lane mask where it folds an index into a boolean; see
 * {@link CRenderer#gatherIndex}), an affine index as it is; elsewhere every index as it is.
 */
class GatherIndexTest {

    /**
     * {@code q = x[i]; out[i] = x[(q / q) & 63] + x[q & 127]; out[(q & 1) + 64] = q} over 64 items: an affine load
     * and store, a load whose index gcc folds into {@code q != 0}, one whose index the guard checks, and a store at an
     * index that is not affine.
     */
    private static CheckedKernel kernel() {
        Expr q = var("q");
        Expr folded = cast(IrType.I64, bin(Expr.Binary.Op.AND, bin(Expr.Binary.Op.DIV, q, q), i32(63)));
        Expr scattered = add(cast(IrType.I64, bin(Expr.Binary.Op.AND, q, i32(1))), i64(64));
        IrKernel k = new IrKernel("folded_index", List.of(
                new IrParam.Buffer("x", DType.I32, Access.READ, i64(64)),
                new IrParam.Buffer("out", DType.I32, Access.WRITE, i64(66))),
                1, List.of(), List.of(
                let("i", gid(0)),
                let("q", load("x", var("i"))),
                store("out", var("i"), add(load("x", folded),
                        load("x", cast(IrType.I64, bin(Expr.Binary.Op.AND, q, i32(127)))))),
                store("out", scattered, q)));
        return IrValidator.check(new IrModule(List.of(k)), "ir").getFirst();
    }

    @Test
    void theCpuMultipliesAnIndexThatIsNotAffineByAOneGccCannotSee() {
        String c = new CRenderer().render(List.of(kernel()));
        assertTrue(c.contains("p_x[((arrayd_i64)(((arrayd_i64)(arrayd_div_i32(v_q, v_q) & ((arrayd_i32)63)))) * arrayd_one)]"), c);
        assertTrue(c.contains("arrayd_ld_i32(p_x, (arrayd_i64)(((arrayd_i64)(((arrayd_i64)(v_q & ((arrayd_i32)127)))) "
                + "* arrayd_one)), arrayd_ext[0], arrayd_guard, 0)"), c);
        assertTrue(c.contains("p_out[((arrayd_i64)(((arrayd_i64)((arrayd_u64)((arrayd_i64)(v_q & ((arrayd_i32)1))) "
                + "+ (arrayd_u64)((arrayd_i64)64)))) * arrayd_one)] = v_q;"), c);
        // the affine accesses stay as they are: contiguous loads and stores to gcc
        assertTrue(c.contains("p_x[(arrayd_i64)(v_i)]"), c);
        assertFalse(c.contains("v_i) * arrayd_one"), c);
    }

    @Test
    void otherDialectsWriteEveryIndexAsItIs() {
        for (CLikeRenderer r : List.of(new OpenClRenderer(), new CudaRenderer())) {
            String src = r.render(List.of(kernel()));
            assertFalse(src.contains("arrayd_one"), src);
        }
    }
}
