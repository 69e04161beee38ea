package dev.arrayd.devices.api.conformance;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.CompileException;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

import static dev.arrayd.devices.api.conformance.Conformance.F32;
import static dev.arrayd.devices.api.conformance.Conformance.I64;
import static dev.arrayd.devices.api.conformance.Conformance.buf;
import static dev.arrayd.devices.api.conformance.Conformance.launch1d;
import static dev.arrayd.devices.api.conformance.Conformance.run;
import static dev.arrayd.devices.api.conformance.Conformance.runExpectingFailure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Compiling and launching the canned kernels ({@link AbstractDeviceConformanceTest}): results, grids, scalars of
 * every dtype, the inline path, refused launches, and compile errors that name the user's line. */
public interface KernelConformance extends ConformanceFixture {

    @Test
    default void vaddSmall() {
        vadd(1000, 1024);
    }

    @Test
    default void vaddLargeEnoughToSplit() {
        vadd(1 << 20, 1 << 20);
    }

    private void vadd(int n, long global) {
        Kernel k = kernel("vadd");
        NativeStream stream = device().newStream("s");
        long bytes = (long) n * 4;
        MemRef a = slab(1, bytes);
        MemRef b = slab(2, bytes);
        MemRef c = slab(3, bytes + 4096); // the tail past n must stay untouched
        MemorySegment ha = host(bytes);
        MemorySegment hb = host(bytes);
        for (int i = 0; i < n; i++) {
            ha.setAtIndex(F32, i, i * 0.5f);
            hb.setAtIndex(F32, i, 1000f - i);
        }
        upload(stream, a, ha);
        upload(stream, b, hb);
        run(stream, new DeviceCommand.Fill(c, Float.floatToRawIntBits(-7f), 4));
        long nanos = run(stream, launch1d(k, global, buf(a), buf(b), buf(c), KernelArg.Scalar.i32(n)));
        assertTrue(nanos >= 0, "device nanos");
        MemorySegment hc = download(stream, c);
        for (int i = 0; i < n; i++) {
            assertEquals(i * 0.5f + (1000f - i), hc.getAtIndex(F32, i), "c[" + i + "]");
        }
        for (long i = n; i < (bytes + 4096) / 4; i++) {
            assertEquals(-7f, hc.getAtIndex(F32, i), "c[" + i + "] past n");
        }
        stream.close();
    }

    /** The inline path either declines or runs the command and calls back before returning. */
    @Test
    default void tryRunInlineRunsBeforeReturningOrDeclines() {
        Kernel k = kernel("vadd");
        NativeStream stream = device().newStream("inline");
        int n = 256;
        MemRef a = slab(1, 4L * n);
        MemRef b = slab(2, 4L * n);
        MemRef c = slab(3, 4L * n);
        MemorySegment ha = host(4L * n);
        for (int i = 0; i < n; i++) {
            ha.setAtIndex(F32, i, i);
        }
        upload(stream, a, ha);
        upload(stream, b, ha);
        long[] called = {0};
        ArraydException[] failure = {null};
        CommandCallback cb = new CommandCallback() {
            @Override
            public void completed(long deviceNanos) {
                called[0]++;
            }

            @Override
            public void failed(ArraydException cause) {
                called[0]++;
                failure[0] = cause;
            }
        };
        boolean ran = stream.tryRunInline(launch1d(k, n, buf(a), buf(b), buf(c), KernelArg.Scalar.i32(n)), cb);
        if (ran) {
            assertEquals(1, called[0], "callback ran exactly once, before tryRunInline returned");
            assertEquals(null, failure[0]);
            MemorySegment hc = download(stream, c);
            for (int i = 0; i < n; i++) {
                assertEquals(2f * i, hc.getAtIndex(F32, i), "c[" + i + "]");
            }
            // a bad command run inline fails through its callback, not by throwing
            assertTrue(stream.tryRunInline(launch1d(k, n, buf(a)), cb));
            assertEquals(2, called[0]);
            assertEquals(ErrorCode.INVALID_ARGUMENT, failure[0].code());
        } else {
            assertEquals(0, called[0], "a declined command is not run");
        }
        stream.close();
    }

    @Test
    default void axpyF64() {
        Kernel k = kernel("axpy_f64");
        NativeStream stream = device().newStream("s");
        int n = 5000;
        MemRef x = slab(1, n * 8L);
        MemRef y = slab(2, n * 8L);
        MemorySegment hx = host(n * 8L);
        MemorySegment hy = host(n * 8L);
        for (int i = 0; i < n; i++) {
            hx.setAtIndex(ValueLayout.JAVA_DOUBLE, i, i);
            hy.setAtIndex(ValueLayout.JAVA_DOUBLE, i, 1.0 / (i + 1));
        }
        upload(stream, x, hx);
        upload(stream, y, hy);
        run(stream, launch1d(k, n, KernelArg.Scalar.f64(2.5), buf(x), buf(y), KernelArg.Scalar.i64(n)));
        MemorySegment back = download(stream, y);
        for (int i = 0; i < n; i++) {
            assertEquals(2.5 * i + 1.0 / (i + 1), back.getAtIndex(ValueLayout.JAVA_DOUBLE, i), "y[" + i + "]");
        }
        stream.close();
    }

    @Test
    default void grid3dWithLocalDims() {
        Kernel k = kernel("index3d");
        NativeStream stream = device().newStream("s");
        long[][][] cases = {
                {{8, 6, 4}, {4, 3, 2}},
                {{64, 32, 16}, {8, 4, 2}}, // 32768 items: large enough to be split where backends split
                {{5, 7, 3}, null},
        };
        for (long[][] c : cases) {
            long[] g = c[0];
            long[] l = c[1];
            long items = g[0] * g[1] * g[2];
            MemRef out = slab(1, items * 3 * 8);
            run(stream, new DeviceCommand.Launch(k, g, l, List.of(buf(out))));
            MemorySegment back = download(stream, out);
            for (long z = 0; z < g[2]; z++) {
                for (long y = 0; y < g[1]; y++) {
                    for (long x = 0; x < g[0]; x++) {
                        long lin = (z * g[1] + y) * g[0] + x;
                        assertEquals(lin, back.getAtIndex(I64, 3 * lin), "lin at " + x + "," + y + "," + z);
                        if (l != null) {
                            long lid = x % l[0] | (y % l[1]) << 16 | (z % l[2]) << 32;
                            long grp = x / l[0] | (y / l[1]) << 16 | (z / l[2]) << 32;
                            assertEquals(lid, back.getAtIndex(I64, 3 * lin + 1), "local id at " + x + "," + y + "," + z);
                            assertEquals(grp, back.getAtIndex(I64, 3 * lin + 2), "group id at " + x + "," + y + "," + z);
                        }
                    }
                }
            }
            device().freePool(1);
        }
        stream.close();
    }

    @Test
    default void scalarArgsOfEveryComputableDtype() {
        Kernel k = kernel("scalars");
        NativeStream stream = device().newStream("s");
        slab(1, 5 * 64);
        MemRef oa = new MemRef(1, 0, 4);
        MemRef ob = new MemRef(1, 64, 8);
        MemRef oc = new MemRef(1, 128, 4);
        MemRef od = new MemRef(1, 192, 8);
        MemRef oe = new MemRef(1, 256, 1);
        float a = 1.5e-3f;
        double b = -2.25e300;
        int c = -123_456_789;
        long d = 0x8123_4567_89ab_cdefL;
        int e = 200;
        run(stream, launch1d(k, 1, KernelArg.Scalar.f32(a), KernelArg.Scalar.f64(b), KernelArg.Scalar.i32(c),
                KernelArg.Scalar.i64(d), KernelArg.Scalar.u8(e), buf(oa), buf(ob), buf(oc), buf(od), buf(oe)));
        MemorySegment back = download(stream, new MemRef(1, 0, 5 * 64));
        assertEquals(a, back.get(F32, 0));
        assertEquals(b, back.get(ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 64));
        assertEquals(c, back.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 128));
        assertEquals(d, back.get(I64, 192));
        assertEquals(e, Byte.toUnsignedInt(back.get(ValueLayout.JAVA_BYTE, 256)));
        stream.close();
    }

    @Test
    default void emptyKernelRoundTrips() {
        Kernel k = kernel("empty");
        NativeStream stream = device().newStream("s");
        for (int i = 0; i < 100; i++) {
            run(stream, launch1d(k, 1));
        }
        assertTrue(stream.isIdle());
        stream.close();
    }

    @Test
    default void badLaunchArgsAreInvalidArgumentAndTheStreamKeepsWorking() {
        Kernel vadd = kernel("vadd");
        NativeStream stream = device().newStream("s");
        MemRef a = slab(1, 4096);
        MemRef b = slab(2, 4096);
        MemRef c = slab(3, 4096);
        KernelArg n = KernelArg.Scalar.i32(1024);
        Map<String, DeviceCommand.Launch> bad = new java.util.LinkedHashMap<>();
        bad.put("too few args", launch1d(vadd, 1024, buf(a), buf(b), buf(c)));
        bad.put("too many args", launch1d(vadd, 1024, buf(a), buf(b), buf(c), n, n));
        bad.put("scalar for a buffer", launch1d(vadd, 1024, buf(a), buf(b), KernelArg.Scalar.f64(1), n));
        bad.put("buffer for a scalar", launch1d(vadd, 1024, buf(a), buf(b), buf(c), buf(a)));
        bad.put("wrong scalar dtype", launch1d(vadd, 1024, buf(a), buf(b), buf(c), KernelArg.Scalar.i64(1024)));
        bad.put("unknown pool", launch1d(vadd, 1024, buf(a), buf(new MemRef(99, 0, 64)), buf(c), n));
        bad.put("zero dim", launch1d(vadd, 0, buf(a), buf(b), buf(c), n));
        bad.put("four dims", new DeviceCommand.Launch(vadd, new long[] {1, 1, 1, 1}, null, List.of(buf(a), buf(b), buf(c), n)));
        bad.put("local not dividing", new DeviceCommand.Launch(vadd, new long[] {1000}, new long[] {64}, List.of(buf(a), buf(b), buf(c), n)));
        bad.put("local dims count", new DeviceCommand.Launch(vadd, new long[] {1024}, new long[] {4, 4}, List.of(buf(a), buf(b), buf(c), n)));
        for (Map.Entry<String, DeviceCommand.Launch> e : bad.entrySet()) {
            ArraydException error = runExpectingFailure(stream, e.getValue());
            assertEquals(ErrorCode.INVALID_ARGUMENT, error.code(), () -> e.getKey() + ": " + error);
        }
        ArraydException wrongType = runExpectingFailure(stream, bad.get("scalar for a buffer"));
        assertTrue(wrongType.getMessage().contains("args[2]"), wrongType::getMessage);
        assertTrue(wrongType.getMessage().contains("c"), wrongType::getMessage);
        ArraydException outside = runExpectingFailure(stream,
                launch1d(vadd, 1024, buf(a), buf(b), buf(new MemRef(3, 4000, 4096)), n));
        assertTrue(Set.of(ErrorCode.OUT_OF_RANGE, ErrorCode.INVALID_ARGUMENT).contains(outside.code()), outside::toString);
        assertTrue(outside.getMessage().contains("args[2]"), outside::getMessage);

        MemorySegment ones = host(4096);
        for (int i = 0; i < 1024; i++) {
            ones.setAtIndex(F32, i, 1f);
        }
        upload(stream, a, ones);
        upload(stream, b, ones);
        run(stream, launch1d(vadd, 1024, buf(a), buf(b), buf(c), n));
        MemorySegment back = download(stream, c);
        for (int i = 0; i < 1024; i++) {
            assertEquals(2f, back.getAtIndex(F32, i), "c[" + i + "]");
        }
        assertTrue(stream.isIdle());
        stream.close();
    }

    @Test
    default void compileErrorNamesTheUsersLine() {
        KernelSource source = kernelSource("compile_error");
        CompileException error = assertThrows(CompileException.class, () -> backend().compiler().compile(source));
        assertEquals(ErrorCode.INVALID_ARGUMENT, error.code());
        assertTrue(error.diagnostics().contains(errorLineMarker(3)),
                () -> "diagnostics mention line 3 as " + errorLineMarker(3) + ":\n" + error.diagnostics());
    }
}
