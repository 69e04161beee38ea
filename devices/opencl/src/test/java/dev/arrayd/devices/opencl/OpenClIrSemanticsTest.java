package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.Expr;
import dev.arrayd.devices.api.ir.IrInterpreter;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.IrParam;
import dev.arrayd.devices.api.ir.IrType;
import dev.arrayd.devices.api.ir.IrValidator;
import dev.arrayd.devices.api.ir.Stmt;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static dev.arrayd.devices.api.ir.IrDsl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The IR's semantics at their edges, on OpenCL against the interpreter, bit for bit: integer division
 * by zero and {@code MIN / -1}, wrapping, shift counts modulo the width, saturating float-to-integer
 * casts, {@code min} / {@code max} ignoring a NaN, no contraction into fma, f16 / bf16 rounding,
 * denormals. OpenCL C differs from the IR in every one of these unless the renderer's helpers and the
 * build options are right. Inputs come from buffers (values the compiler cannot fold). Skipped, with
 * the reason printed, where there is no OpenCL runtime.
 */
class OpenClIrSemanticsTest {

    private static final int[] INTS = {
            7, 2, -7, 2, 7, -2, Integer.MIN_VALUE, -1, 5, 0, Integer.MIN_VALUE, 31, -1, 33, Integer.MAX_VALUE, -33,
            -200, 3, 255, 256, 0, -1, 123456789, 987654321, 3, -3};
    private static final float[] FLOATS = {
            Float.NaN, 1f, 1f, Float.NaN, -0f, 0f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 1e-45f, 3f,
            65520f, 0.1f, 3.5f, -2f, 1e10f, 7f, -2.5e9f, 0.2f, 0.1f, 0.2f, 2.5f, -2.5f, 1.0000001f, 1e-40f,
            1.0000001f, -0.99999988f}; // the last pair: fa * fb + fa differs from fma(fa, fb, fa)

    private static Expr a() {
        return load("ii", mul(gid(0), i64(2)));
    }

    private static Expr b() {
        return load("ii", add(mul(gid(0), i64(2)), i64(1)));
    }

    private static Expr fa() {
        return load("fi", mul(gid(0), i64(2)));
    }

    private static Expr fb() {
        return load("fi", add(mul(gid(0), i64(2)), i64(1)));
    }

    private static Expr op(Expr.Binary.Op op, Expr x, Expr y) {
        return bin(op, x, y);
    }

    private static Expr un(Expr.Unary.Op op, Expr x) {
        return new Expr.Unary(op, x);
    }

    private static List<Expr> intResults() {
        return List.of(
                op(Expr.Binary.Op.DIV, a(), b()),
                op(Expr.Binary.Op.REM, a(), b()),
                op(Expr.Binary.Op.SHL, a(), b()),
                op(Expr.Binary.Op.SHR, a(), b()),
                un(Expr.Unary.Op.NEG, a()),
                un(Expr.Unary.Op.ABS, a()),
                cast(IrType.I32, cast(IrType.U8, a())),
                cast(IrType.I32, fa()),
                cast(IrType.I32, fb()),
                mul(a(), b()),
                add(a(), b()),
                cast(IrType.I32, op(Expr.Binary.Op.SHR, cast(IrType.U8, a()), cast(IrType.U8, b()))),
                cast(IrType.I32, op(Expr.Binary.Op.DIV, cast(IrType.U8, a()), cast(IrType.U8, b()))),
                cast(IrType.I32, cast(IrType.U8, fa())),
                cast(IrType.I32, op(Expr.Binary.Op.LT, fa(), fb())));
    }

    private static List<Expr> floatResults() {
        return List.of(
                op(Expr.Binary.Op.MIN, fa(), fb()),
                op(Expr.Binary.Op.MAX, fa(), fb()),
                op(Expr.Binary.Op.REM, fa(), fb()),
                op(Expr.Binary.Op.DIV, fa(), fb()),
                un(Expr.Unary.Op.SQRT, fa()),
                un(Expr.Unary.Op.FLOOR, fa()),
                un(Expr.Unary.Op.CEIL, fb()),
                new Expr.Fma(fa(), fb(), fa()),
                add(mul(fa(), fb()), fa()),
                cast(IrType.F32, mul(cast(IrType.I64, a()), i64(3))),
                cast(IrType.F32, cast(IrType.F64, fa())),
                un(Expr.Unary.Op.NEG, fb()),
                mul(fa(), f32(1e-38f)));
    }

    private static List<Expr> longResults() {
        Expr big = mul(cast(IrType.I64, a()), i64(1L << 33));
        return List.of(
                op(Expr.Binary.Op.DIV, big, cast(IrType.I64, b())),
                op(Expr.Binary.Op.REM, big, cast(IrType.I64, b())),
                cast(IrType.I64, fa()),
                op(Expr.Binary.Op.SHR, big, cast(IrType.I64, b())),
                op(Expr.Binary.Op.DIV, i64(Long.MIN_VALUE), cast(IrType.I64, op(Expr.Binary.Op.MIN, b(), i32(-1)))));
    }

    private static IrKernel kernel() {
        List<Expr> ints = intResults();
        List<Expr> floats = floatResults();
        List<Expr> longs = longResults();
        List<Stmt> body = new ArrayList<>();
        for (int j = 0; j < ints.size(); j++) {
            body.add(store("oi", add(mul(gid(0), i64(ints.size())), i64(j)), ints.get(j)));
        }
        for (int j = 0; j < floats.size(); j++) {
            body.add(store("of", add(mul(gid(0), i64(floats.size())), i64(j)), floats.get(j)));
        }
        for (int j = 0; j < longs.size(); j++) {
            body.add(store("ol", add(mul(gid(0), i64(longs.size())), i64(j)), longs.get(j)));
        }
        body.add(store("oh", mul(gid(0), i64(2)), fa()));
        body.add(store("oh", add(mul(gid(0), i64(2)), i64(1)), fb()));
        body.add(store("ob", mul(gid(0), i64(2)), fa()));
        body.add(store("ob", add(mul(gid(0), i64(2)), i64(1)), fb()));
        return new IrKernel("edges", List.of(
                new IrParam.Buffer("ii", DType.I32, Access.READ, null),
                new IrParam.Buffer("fi", DType.F32, Access.READ, null),
                new IrParam.Buffer("oi", DType.I32, Access.WRITE, null),
                new IrParam.Buffer("of", DType.F32, Access.WRITE, null),
                new IrParam.Buffer("ol", DType.I64, Access.WRITE, null),
                new IrParam.Buffer("oh", DType.F16, Access.WRITE, null),
                new IrParam.Buffer("ob", DType.BF16, Access.WRITE, null)),
                1, List.of(), body);
    }

    @Test
    void edgesOfTheSemanticsMatchTheInterpreterBitForBit() {
        try (OpenClIrHarness h = new OpenClIrHarness()) {
            Assumptions.assumeTrue(h.unavailableReason().isEmpty(), () -> "opencl unavailable: " + h.unavailableReason().orElse(""));
            IrKernel k = kernel();
            Kernel compiled = h.compile(k).getFirst();
            int items = INTS.length / 2;
            long[] sizes = {4L * INTS.length, 4L * FLOATS.length, 4L * items * intResults().size(),
                    4L * items * floatResults().size(), 8L * items * longResults().size(), 2L * 2 * items, 2L * 2 * items};
            List<MemRef> refs = new ArrayList<>();
            List<Object> heap = new ArrayList<>();
            for (long bytes : sizes) {
                refs.add(h.alloc(bytes));
                heap.add(MemorySegment.ofArray(new byte[(int) bytes]));
            }
            h.write(refs.get(0), MemorySegment.ofArray(INTS));
            h.write(refs.get(1), MemorySegment.ofArray(FLOATS));
            ((MemorySegment) heap.get(0)).copyFrom(MemorySegment.ofArray(INTS));
            ((MemorySegment) heap.get(1)).copyFrom(MemorySegment.ofArray(FLOATS));
            List<KernelArg> args = refs.stream().<KernelArg>map(KernelArg.Buffer::new).toList();
            h.launch(compiled, new long[] {items}, null, args);
            CheckedKernel checked = IrValidator.check(new IrModule(List.of(k)), "").getFirst();
            IrInterpreter.run(checked, new long[] {items}, null, heap);
            String[] names = {"ii", "fi", "oi", "of", "ol", "oh", "ob"};
            for (int b = 2; b < refs.size(); b++) {
                byte[] want = ((MemorySegment) heap.get(b)).toArray(ValueLayout.JAVA_BYTE);
                byte[] got = h.read(refs.get(b)).toArray(ValueLayout.JAVA_BYTE);
                int width = b == 4 ? 8 : b >= 5 ? 2 : 4;
                boolean floats = b == 3 || b >= 5;
                for (int at = 0; at < want.length; at += width) {
                    if (floats && isNaN(want, at, b) && isNaN(got, at, b)) {
                        continue; // NaN payloads may differ (as on the CPU)
                    }
                    assertEquals(hex(want, at, width), hex(got, at, width), names[b] + "[" + at / width + "] (interpreter, opencl)");
                }
            }
        }
    }

    /** Whether the element at {@code at} of buffer {@code b} (f32, f16 or bf16) is a NaN. */
    private static boolean isNaN(byte[] bytes, int at, int b) {
        if (b == 3) {
            int bits = (bytes[at] & 0xff) | (bytes[at + 1] & 0xff) << 8 | (bytes[at + 2] & 0xff) << 16 | (bytes[at + 3] & 0xff) << 24;
            return Float.isNaN(Float.intBitsToFloat(bits));
        }
        int bits = (bytes[at] & 0xff) | (bytes[at + 1] & 0xff) << 8;
        int exponentMask = b == 5 ? 0x7c00 : 0x7f80;
        return (bits & exponentMask) == exponentMask && (bits & ~exponentMask & 0x7fff) != 0;
    }

    private static String hex(byte[] bytes, int at, int width) {
        StringBuilder s = new StringBuilder("0x");
        for (int i = width - 1; i >= 0; i--) {
            s.append(String.format("%02x", bytes[at + i]));
        }
        return s.toString();
    }
}
