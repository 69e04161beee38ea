package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.arrayd.devices.api.ir.IrDsl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bad IR is INVALID_ARGUMENT naming the node by its path and the problem. */
class IrValidatorTest {

    private static final List<IrParam> PARAMS = List.of(
            new IrParam.Buffer("x", DType.F32, Access.READ, null),
            new IrParam.Buffer("y", DType.F32, Access.WRITE, null),
            new IrParam.Scalar("n", DType.I32, null, null),
            new IrParam.Scalar("m", DType.I32, 0L, 100L));

    private static void rejects(String expected, List<Stmt> body) {
        rejects(expected, new IrKernel("k", PARAMS, 1, List.of(), body));
    }

    private static void rejects(String expected, IrKernel k) {
        ArraydException e = assertThrows(ArraydException.class,
                () -> IrValidator.check(new IrModule(List.of(k)), "modules[0].ir"));
        assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().startsWith(expected), () -> "expected \"" + expected + "\"..., got: " + e.getMessage());
    }

    @Test
    void illTypedIndex() {
        rejects("modules[0].ir.kernels[0].body[1].store.index: i32 or i64 expected, got f32",
                List.of(let("a", f32(1)), store("y", var("a"), f32(2))));
    }

    @Test
    void dtypeMismatchOfAStoredValue() {
        rejects("modules[0].ir.kernels[0].body[0].store.value: f32 expected, got i32", List.of(store("y", gid(0), i32(1))));
    }

    @Test
    void unknownNames() {
        rejects("modules[0].ir.kernels[0].body[0].store.value.param: \"q\"", List.of(store("y", gid(0), param("q"))));
        rejects("modules[0].ir.kernels[0].body[0].store.value.var: \"v\"", List.of(store("y", gid(0), var("v"))));
        rejects("modules[0].ir.kernels[0].body[0].store.array: \"z\"", List.of(store("z", gid(0), f32(1))));
    }

    @Test
    void scalarBufferConfusion() {
        rejects("modules[0].ir.kernels[0].body[0].store.value.param: \"x\" is a buffer",
                List.of(store("y", gid(0), param("x"))));
        rejects("modules[0].ir.kernels[0].body[0].store.array: buffer x is declared READ",
                List.of(store("x", gid(0), f32(1))));
    }

    @Test
    void unboundedLoops() {
        rejects("modules[0].ir.kernels[0].body[0].loop.end: may reach 2147483647",
                List.of(loop("i", i32(0), param("n"), store("y", i64(0), f32(1)))));
        // a declared max bounds it
        IrValidator.check(new IrModule(List.of(new IrKernel("k", PARAMS, 1, List.of(),
                List.of(loop("i", i32(0), param("m"), store("y", i64(0), f32(1))))))), "");
    }

    @Test
    void barrierInDivergentCode() {
        IrKernel k = new IrKernel("k", PARAMS, 1, List.of(64L), List.of(
                when(lt(gid(0), i64(3)), new Stmt.Barrier())));
        rejects("modules[0].ir.kernels[0].body[0].branch.then_body[0].barrier: in divergent control flow", k);
        IrKernel noLocal = new IrKernel("k", PARAMS, 1, List.of(), List.of(new Stmt.Barrier()));
        rejects("modules[0].ir.kernels[0].body[0].barrier: kernel k declares no local_size", noLocal);
    }

    @Test
    void gridLimits() {
        rejects("modules[0].ir.kernels[0].grid_dims: 4", new IrKernel("k", PARAMS, 4, List.of(), List.of()));
        rejects("modules[0].ir.kernels[0].local_size: [64, 64]",
                new IrKernel("k", PARAMS, 2, List.of(64L, 64L), List.of()));
    }

    @Test
    void immutableVariablesAndShadowing() {
        rejects("modules[0].ir.kernels[0].body[1].assign.name: \"a\" is immutable",
                List.of(let("a", i32(1)), new Stmt.Assign("a", i32(2))));
        rejects("modules[0].ir.kernels[0].body[1].let.name: \"a\" is already declared",
                List.of(let("a", i32(1)), let("a", i32(2))));
    }

    @Test
    void mixedOperandTypes() {
        rejects("modules[0].ir.kernels[0].body[0].let.value.binary.right: i64 expected, got i32",
                List.of(let("a", add(gid(0), i32(1)))));
    }

    @Test
    void halfConversionsMatchTheJdk() {
        for (int bits = 0; bits < 65536; bits++) {
            final int h = bits;
            float f = Float.float16ToFloat((short) h);
            float mine = Half.f16ToF32((short) h);
            assertTrue(Float.isNaN(f) ? Float.isNaN(mine) : Float.floatToRawIntBits(f) == Float.floatToRawIntBits(mine),
                    () -> "f16 " + Integer.toHexString(h));
            if (!Float.isNaN(f)) {
                assertEquals((short) h, Half.f32ToF16(f));
            }
        }
        java.util.Random r = new java.util.Random(7);
        for (int i = 0; i < 200_000; i++) {
            float f = Float.intBitsToFloat(r.nextInt());
            if (!Float.isNaN(f)) {
                assertEquals(Float.floatToFloat16(f), Half.f32ToF16(f), () -> "f32 " + f);
            }
        }
    }
}
