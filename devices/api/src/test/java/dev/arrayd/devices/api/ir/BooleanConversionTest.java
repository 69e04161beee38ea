package dev.arrayd.devices.api.ir;

import static dev.arrayd.devices.api.ir.IrDsl.*;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How a boolean becomes an integer in each dialect: in the CPU's C a select of {@code arrayd_one}, a 1 gcc cannot see
 * (GCC 12.2's vectorizer miscompiles a gather whose offset is a converted boolean; see {@link CRenderer}), elsewhere
 * a plain conversion.
 */
class BooleanConversionTest {

    /** {@code out[i] = x[(i != 46) & 63] + (i > 3)} over 64 items, with a guard the CPU hoists. */
    private static CheckedKernel kernel() {
        Expr ne = bin(Expr.Binary.Op.NE, cast(IrType.I32, gid(0)), i32(46));
        Expr index = cast(IrType.I64, bin(Expr.Binary.Op.AND, cast(IrType.I32, ne), i32(63)));
        Expr gt = cast(IrType.I32, bin(Expr.Binary.Op.GT, var("i"), i64(3)));
        IrKernel k = new IrKernel("bool_index", List.of(
                new IrParam.Buffer("x", DType.I32, Access.READ, i64(64)),
                new IrParam.Buffer("out", DType.I32, Access.WRITE, null)),
                1, List.of(), List.of(
                let("i", gid(0)),
                store("out", var("i"), add(load("x", index), gt))));
        return IrValidator.check(new IrModule(List.of(k)), "ir").getFirst();
    }

    @Test
    void theCpuConvertsABooleanWithAOneGccCannotSee() {
        String c = new CRenderer().render(List.of(kernel()));
        assertTrue(c.contains("p_x[((arrayd_i64)(((arrayd_i64)(((arrayd_i32)((((arrayd_i32)(((arrayd_i32)arrayd_global_id(0)) "
                + "!= ((arrayd_i32)46)))) ? arrayd_one : 0)) & ((arrayd_i32)63)))) * arrayd_one)]"), c);
        assertTrue(c.contains("((arrayd_i32)((((arrayd_i32)(v_i > ((arrayd_i64)3)))) ? arrayd_one : 0))"), c);
        assertFalse(c.contains("(arrayd_i32)((arrayd_i32)(("), "no plain conversion of a comparison\n" + c);
        // the kernel takes the 1 from its trampoline; the predicate of its hoisted guards, no loop, declares it
        assertTrue(c.contains("arrayd_i64 *arrayd_guard, const arrayd_i32 arrayd_one, const int arrayd_ok) {"), c);
        int predicate = c.indexOf("ARRAYD_FN int arrayd_ok_bool_index(");
        assertTrue(predicate >= 0 && c.indexOf("    const arrayd_i32 arrayd_one = 1;\n", predicate) > predicate, c);
    }

    @Test
    void otherDialectsConvertPlainly() {
        for (CLikeRenderer r : List.of(new OpenClRenderer(), new CudaRenderer())) {
            String src = r.render(List.of(kernel()));
            assertFalse(src.contains("arrayd_one"), src);
            assertTrue(src.contains("((arrayd_i32)((arrayd_i32)(v_i > ((arrayd_i64)3))))"), src);
        }
    }
}
