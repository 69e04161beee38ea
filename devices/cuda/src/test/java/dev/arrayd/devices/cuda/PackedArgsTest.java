package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.conformance.AbstractDeviceConformanceTest;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PackedArgsTest {

    /** Pool p lives at 0x7f00_0000_0000 + p * 2^32; pool 99 is not allocated. */
    private static long address(MemRef ref, int index) {
        if (ref.poolId() == 99) {
            throw ArraydException.invalid("args[" + index + "]: " + ref + " (expected: an allocated pool)");
        }
        return 0x7f00_0000_0000L + ((long) ref.poolId() << 32) + ref.offset();
    }

    private static final KernelSignature SCALARS = AbstractDeviceConformanceTest.cannedSignature("scalars");
    private static final KernelSignature VADD = AbstractDeviceConformanceTest.cannedSignature("vadd");

    @Test
    void buffersBecomeBasePlusOffsetAndScalarsTheirBitsAtTheirWidth() {
        MemRef a = new MemRef(1, 256, 4096);
        MemRef b = new MemRef(2, 0, 4096);
        MemRef c = new MemRef(1, 8192, 4096);
        PackedArgs p = PackedArgs.pack(VADD, List.of(new KernelArg.Buffer(a), new KernelArg.Buffer(b), new KernelArg.Buffer(c),
                KernelArg.Scalar.i32(-5)), PackedArgsTest::address);
        assertArrayEquals(new long[] {0x7f01_0000_0100L, 0x7f02_0000_0000L, 0x7f01_0000_2000L, -5}, p.values());
        assertArrayEquals(new int[] {8, 8, 8, 4}, p.widths());

        List<KernelArg> args = List.of(KernelArg.Scalar.f32(1.5f), KernelArg.Scalar.f64(-2.25), KernelArg.Scalar.i32(7),
                KernelArg.Scalar.i64(Long.MIN_VALUE), KernelArg.Scalar.u8(200), new KernelArg.Buffer(new MemRef(3, 0, 4)),
                new KernelArg.Buffer(new MemRef(3, 64, 8)), new KernelArg.Buffer(new MemRef(3, 128, 4)),
                new KernelArg.Buffer(new MemRef(3, 192, 8)), new KernelArg.Buffer(new MemRef(3, 256, 1)));
        PackedArgs s = PackedArgs.pack(SCALARS, args, PackedArgsTest::address);
        assertArrayEquals(new int[] {4, 8, 4, 8, 1, 8, 8, 8, 8, 8}, s.widths());
        assertEquals(Float.floatToRawIntBits(1.5f), (int) s.values()[0]);
        assertEquals(Double.doubleToRawLongBits(-2.25), s.values()[1]);
        assertEquals(Long.MIN_VALUE, s.values()[3]);
        assertEquals(200, s.values()[4]);
        assertEquals(0x7f03_0000_00c0L, s.values()[8]);
    }

    @Test
    void mismatchesAreInvalidArgumentNamingTheArgument() {
        KernelArg buf = new KernelArg.Buffer(new MemRef(1, 0, 64));
        KernelArg n = KernelArg.Scalar.i32(16);
        bad(List.of(buf, buf, buf), "args: 3 arguments (expected: 4 for vadd(buffer f32 a, buffer f32 b, buffer f32 c, i32 n))");
        bad(List.of(buf, buf, KernelArg.Scalar.f64(1), n), "args[2]: f64 scalar (expected: buffer of f32 for parameter c)");
        bad(List.of(buf, buf, buf, buf), "args[3]: buffer pool1+0[64] (expected: i32 scalar for parameter n)");
        bad(List.of(buf, buf, buf, KernelArg.Scalar.i64(16)), "args[3]: i64 scalar (expected: i32 scalar for parameter n)");
        bad(List.of(buf, new KernelArg.Buffer(new MemRef(99, 0, 4)), buf, n), "args[1]: pool99+0[4]");
        bad(List.of(buf, buf, buf, new KernelArg.Scalar(dev.arrayd.devices.api.DType.I32, 1L << 40)), "args[3]: i32 scalar 1099511627776");
    }

    private static void bad(List<KernelArg> args, String fragment) {
        ArraydException e = assertThrows(ArraydException.class, () -> PackedArgs.pack(VADD, args, PackedArgsTest::address));
        assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().contains(fragment), () -> e.getMessage() + " should contain " + fragment);
    }
}
