package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.testing.ResourcesPerClass;
import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ir.Expr;
import dev.arrayd.devices.api.ir.IrInterpreter;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.IrParam;
import dev.arrayd.devices.api.ir.IrSamples;
import dev.arrayd.devices.api.ir.IrType;
import dev.arrayd.devices.api.ir.IrValidator;
import dev.arrayd.devices.api.ir.Stmt;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static dev.arrayd.devices.api.ir.IrDsl.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * IR kernels on the OpenCL backend (PoCL in CI): results against the interpreter and plain Java,
 * guards that fail a launch with OUT_OF_RANGE, local arrays and barriers, launch checks, the binary
 * cache. Skipped, with the reason printed, where there is no OpenCL runtime.
 */
@ResourcesPerClass("one OpenCL backend and its compiled kernels serve every test")
class OpenClIrTest {

    private static OpenClIrHarness h;
    private static Kernel saxpy;
    private static Kernel gather;
    private static Kernel matmul;
    private static Kernel groupSum;

    @BeforeAll
    static void compileOnce() {
        h = new OpenClIrHarness();
        if (h.unavailableReason().isPresent()) {
            return; // each test is skipped with the reason (the harness printed it)
        }
        List<Kernel> k = h.compile(IrSamples.saxpy(), IrSamples.gatherUnchecked(), IrSamples.matmul(), IrSamples.groupSum());
        saxpy = k.get(0);
        gather = k.get(1);
        matmul = k.get(2);
        groupSum = k.get(3);
    }

    @BeforeEach
    void needsOpenCl() {
        Assumptions.assumeTrue(h.unavailableReason().isEmpty(), () -> "opencl unavailable: " + h.unavailableReason().orElse(""));
    }

    @AfterAll
    static void close() {
        if (h != null) {
            h.close();
        }
    }

    private static MemRef floats(float[] values) {
        MemRef ref = h.alloc(4L * values.length);
        h.write(ref, MemorySegment.ofArray(values));
        return ref;
    }

    private static float[] floatsOf(MemRef ref) {
        return h.read(ref).toArray(ValueLayout.JAVA_FLOAT_UNALIGNED);
    }

    private static int[] intsOf(MemRef ref) {
        return h.read(ref).toArray(ValueLayout.JAVA_INT_UNALIGNED);
    }

    @Test
    void saxpyMatchesTheInterpreter() {
        int n = 10_000;
        float[] x = new float[n];
        float[] y = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = i * 0.5f;
            y[i] = 1000 - i * 1.25f;
        }
        MemRef xr = floats(x);
        MemRef yr = floats(y);
        h.launch(saxpy, new long[] {n + 7}, null, List.of(KernelArg.Scalar.f32(3.1f), new KernelArg.Buffer(xr),
                new KernelArg.Buffer(yr), KernelArg.Scalar.i64(n)));
        MemorySegment ys = MemorySegment.ofArray(y.clone());
        var checked = IrValidator.check(new IrModule(List.of(IrSamples.saxpy())), "").getFirst();
        IrInterpreter.run(checked, new long[] {n + 7}, null, List.of(KernelArg.Scalar.f32(3.1f), MemorySegment.ofArray(x), ys,
                KernelArg.Scalar.i64(n)));
        // bit for bit: no contraction of a * x + y into an fma
        assertArrayEquals(ys.toArray(ValueLayout.JAVA_FLOAT), floatsOf(yr));
        assertEquals(-1, ((OpenClKernel) saxpy).guardArg(), "every access is proven: no guard record");
    }

    @Test
    void matmulIsRight() {
        int m = 5, k = 7, n = 3;
        float[] a = new float[m * k];
        float[] b = new float[k * n];
        for (int i = 0; i < a.length; i++) {
            a[i] = i % 5 - 2;
        }
        for (int i = 0; i < b.length; i++) {
            b[i] = i % 3 + 1;
        }
        MemRef c = h.alloc(4L * m * n);
        h.launch(matmul, new long[] {n + 1, m + 2}, null, List.of(new KernelArg.Buffer(floats(a)),
                new KernelArg.Buffer(floats(b)), new KernelArg.Buffer(c), KernelArg.Scalar.i32(m), KernelArg.Scalar.i32(n),
                KernelArg.Scalar.i32(k)));
        float[] got = floatsOf(c);
        for (int r = 0; r < m; r++) {
            for (int col = 0; col < n; col++) {
                float want = 0;
                for (int kk = 0; kk < k; kk++) {
                    want += a[r * k + kk] * b[kk * n + col];
                }
                assertEquals(want, got[r * n + col], "c[" + r + "][" + col + "]");
            }
        }
    }

    @Test
    void aFailedGuardIsOutOfRangeNamingKernelBufferAndIndexAndTouchesNothingElse() {
        MemRef in = h.alloc(4 * 10);
        MemRef out = h.alloc(4 * 10);
        MemRef neighbour = h.alloc(4 * 64);
        byte[] marks = new byte[4 * 64];
        java.util.Arrays.fill(marks, (byte) 0x5a);
        h.write(neighbour, MemorySegment.ofArray(marks));
        int[] values = new int[10];
        for (int i = 0; i < 10; i++) {
            values[i] = 100 + i;
        }
        h.write(in, MemorySegment.ofArray(values));
        List<KernelArg> args = List.of(new KernelArg.Buffer(in), new KernelArg.Buffer(out));
        ArraydException e = assertThrows(ArraydException.class, () -> h.launch(gather, new long[] {40}, null, args));
        assertEquals(ErrorCode.OUT_OF_RANGE, e.code(), e::toString);
        assertTrue(e.getMessage().contains("kernel gather") && e.getMessage().matches(".*index \\d+ of buffer (in|out) \\(args\\[[01]\\], 10 elements\\).*"),
                e::getMessage);
        assertArrayEquals(new int[] {100, 102, 104, 106, 108, 0, 0, 0, 0, 0}, intsOf(out));
        for (byte v : h.read(neighbour).toArray(ValueLayout.JAVA_BYTE)) {
            assertEquals(0x5a, v);
        }
        // the stream goes on, and an in-range launch of the same kernel passes its (reused) guard record
        h.launch(gather, new long[] {5}, null, args);
        h.launch(gather, new long[] {5}, null, args);
        assertArrayEquals(new int[] {100, 102, 104, 106, 108, 0, 0, 0, 0, 0}, intsOf(out));
        ArraydException again = assertThrows(ArraydException.class, () -> h.launch(gather, new long[] {6}, null, args));
        assertTrue(again.getMessage().contains("index 10 of buffer in (args[0], 10 elements)"), again::getMessage);
    }

    @Test
    void guardsAreCheckedOncePerGroupAndAGroupThatFailsStillFailsTheLaunch() {
        String program = IrProgramAssembler.assemble(IrValidator.check(new IrModule(List.of(IrSamples.blockMatmul(2, 8))), ""));
        assertTrue(program.contains("if (arrayd_ok_block_matmul(arrayd_lo, arrayd_hi, p_a, p_b, p_c, p_m, p_n, p_k, arrayd_ext)) {"),
                program);
        Kernel blocks = h.compile(IrSamples.blockMatmul(2, 8)).getFirst();
        int m = 4, n = 8 * 20, k = 5;
        float[] a = new float[m * k];
        float[] b = new float[k * n];
        for (int i = 0; i < a.length; i++) {
            a[i] = (i % 11) - 5 + 0.5f * (i % 3);
        }
        for (int i = 0; i < b.length; i++) {
            b[i] = (i % 7) - 3 + 0.25f * (i % 5);
        }
        MemRef c = h.alloc(4L * m * n);
        MemRef neighbour = h.alloc(4 * 64);
        byte[] marks = new byte[4 * 64];
        java.util.Arrays.fill(marks, (byte) 0x5a);
        h.write(neighbour, MemorySegment.ofArray(marks));
        List<KernelArg> args = List.of(new KernelArg.Buffer(floats(a)), new KernelArg.Buffer(floats(b)), new KernelArg.Buffer(c),
                KernelArg.Scalar.i32(m), KernelArg.Scalar.i32(n), KernelArg.Scalar.i32(k));
        // groups of 4 x 1 items: every group in bounds, each runs without a test per access
        h.launch(blocks, new long[] {n / 8, m / 2}, new long[] {4, 1}, args);
        float[] want = new float[m * n];
        for (int r = 0; r < m; r++) {
            for (int col = 0; col < n; col++) {
                float sum = 0;
                for (int kk = 0; kk < k; kk++) {
                    sum = sum + a[r * k + kk] * b[kk * n + col];
                }
                want[r * n + col] = sum;
            }
        }
        assertArrayEquals(want, floatsOf(c));
        // one group of items more along x: its check fails, it runs with a test per access and the launch fails
        ArraydException e = assertThrows(ArraydException.class, () -> h.launch(blocks, new long[] {n / 8 + 4, m / 2},
                new long[] {4, 1}, args));
        assertEquals(ErrorCode.OUT_OF_RANGE, e.code(), e::toString);
        assertTrue(e.getMessage().contains("kernel block_matmul") && e.getMessage().matches(".*of buffer (b|c) .*"), e::getMessage);
        for (byte v : h.read(neighbour).toArray(ValueLayout.JAVA_BYTE)) {
            assertEquals(0x5a, v);
        }
    }

    @Test
    void localArraysAndBarriersSumEachGroup() {
        int groups = 5;
        float[] x = new float[256 * groups];
        for (int i = 0; i < x.length; i++) {
            x[i] = (i % 17) - 8 + 0.25f * (i % 3);
        }
        MemRef partial = h.alloc(4L * groups);
        h.launch(groupSum, new long[] {x.length}, null, List.of(new KernelArg.Buffer(floats(x)), new KernelArg.Buffer(partial)));
        MemorySegment want = MemorySegment.ofArray(new float[groups]);
        var checked = IrValidator.check(new IrModule(List.of(IrSamples.groupSum())), "").getFirst();
        IrInterpreter.run(checked, new long[] {x.length}, null, List.of(MemorySegment.ofArray(x), want));
        assertArrayEquals(want.toArray(ValueLayout.JAVA_FLOAT), floatsOf(partial));
        ArraydException wrongLocal = assertThrows(ArraydException.class, () -> h.launch(groupSum, new long[] {x.length},
                new long[] {128}, List.of(new KernelArg.Buffer(floats(x)), new KernelArg.Buffer(partial))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, wrongLocal.code());
        assertTrue(wrongLocal.getMessage().contains("localDims: [128] (expected: none or [256]"), wrongLocal::getMessage);
    }

    /** Items exchange values through local memory across a barrier; a local array read before any write holds zeros. */
    @Test
    void localArraysStartZeroedAndCarryValuesAcrossTheBarrier() {
        IrKernel dirty = new IrKernel("dirty", List.of(new IrParam.Buffer("out", DType.I32, Access.WRITE, i64(64))),
                1, List.of(64L), List.of(
                new Stmt.LocalArray("junk", DType.I32, 64),
                store("junk", lid(0), add(i32(0x5a5a), cast(IrType.I32, lid(0)))),
                new Stmt.Barrier(),
                when(lt(gid(0), i64(64)), store("out", gid(0), load("junk", bin(Expr.Binary.Op.AND,
                        add(lid(0), i64(1)), i64(63)))))));
        IrKernel fresh = new IrKernel("fresh", List.of(new IrParam.Buffer("out", DType.I32, Access.WRITE, i64(64))),
                1, List.of(64L), List.of(
                new Stmt.LocalArray("tile", DType.I32, 64),
                new Stmt.LocalArray("bytes", DType.U8, 64),
                when(lt(gid(0), i64(64)), store("out", gid(0), add(load("tile", lid(0)),
                        cast(IrType.I32, load("bytes", lid(0))))))));
        List<Kernel> k = h.compile(dirty, fresh);
        MemRef out = h.alloc(4 * 64);
        h.launch(k.get(0), new long[] {64}, null, List.of(new KernelArg.Buffer(out)));
        int[] got = intsOf(out);
        for (int i = 0; i < 64; i++) {
            assertEquals(0x5a5a + (i + 1) % 64, got[i], "out[" + i + "]: the neighbour's value after the barrier");
        }
        h.launch(k.get(1), new long[] {64}, null, List.of(new KernelArg.Buffer(out)));
        assertArrayEquals(new int[64], intsOf(out), "local arrays start zeroed, whatever ran before");
    }

    /** A 2-D group of 4 x 2 items: zeroing covers a local array larger than the group, items meet after the barrier. */
    @Test
    void twoDimensionalGroupsZeroAndShareTheirLocalArrays() {
        Expr l = add(lid(0), mul(lid(1), i64(4)));
        Expr g = add(gid(0), mul(gid(1), i64(8)));
        IrKernel grid2 = new IrKernel("grid2", List.of(new IrParam.Buffer("out", DType.I64, Access.WRITE, i64(32))),
                2, List.of(4L, 2L), List.of(
                new Stmt.LocalArray("t", DType.I64, 8),
                new Stmt.LocalArray("z", DType.I64, 20),
                store("t", l, add(mul(g, i64(10)), i64(1))),
                new Stmt.Barrier(),
                when(lt(g, i64(32)), store("out", g, add(load("t", bin(Expr.Binary.Op.AND, add(l, i64(1)), i64(7))),
                        load("z", add(l, i64(12))))))));
        Kernel k = h.compile(grid2).getFirst();
        MemRef out = h.alloc(8 * 32);
        h.launch(k, new long[] {8, 4}, null, List.of(new KernelArg.Buffer(out)));
        long[] got = h.read(out).toArray(ValueLayout.JAVA_LONG_UNALIGNED);
        for (int y = 0; y < 4; y++) {
            for (int x = 0; x < 8; x++) {
                int lx = x % 4;
                int ly = y % 2;
                int next = (lx + 4 * ly + 1) & 7;
                long gx = x - lx + next % 4;
                long gy = y - ly + next / 4;
                assertEquals((gx + 8 * gy) * 10 + 1, got[x + 8 * y], "out[" + x + ", " + y + "]");
            }
        }
    }

    @Test
    void aGuardOnALocalArrayNamesIt() {
        IrKernel spill = new IrKernel("spill", List.of(new IrParam.Buffer("out", DType.I32, Access.WRITE, i64(16))),
                1, List.of(16L), List.of(
                new Stmt.LocalArray("sh", DType.I32, 16),
                store("sh", mul(lid(0), i64(2)), i32(1)),
                new Stmt.Barrier(),
                store("out", lid(0), load("sh", lid(0)))));
        Kernel k = h.compile(spill).getFirst();
        MemRef out = h.alloc(4 * 16);
        ArraydException e = assertThrows(ArraydException.class, () -> h.launch(k, new long[] {16}, null,
                List.of(new KernelArg.Buffer(out))));
        assertEquals(ErrorCode.OUT_OF_RANGE, e.code(), e::toString);
        assertTrue(e.getMessage().matches("kernel spill: index (1[6-9]|2\\d|30) of local array sh \\(16 elements\\).*"),
                e::getMessage);
        int[] got = intsOf(out);
        for (int i = 0; i < 16; i++) {
            assertEquals(i % 2 == 0 ? 1 : 0, got[i], "out[" + i + "]");
        }
    }

    @Test
    void launchesAreCheckedAgainstWhatTheKernelDeclares() {
        MemRef x = h.alloc(4 * 10);
        MemRef y = h.alloc(4 * 10);
        ArraydException small = assertThrows(ArraydException.class, () -> h.launch(saxpy, new long[] {16}, null,
                List.of(KernelArg.Scalar.f32(1), new KernelArg.Buffer(x), new KernelArg.Buffer(y), KernelArg.Scalar.i64(11))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, small.code());
        assertTrue(small.getMessage().contains("args[1]: buffer of 10 elements for x (expected: at least 11"), small::getMessage);
        ArraydException bound = assertThrows(ArraydException.class, () -> h.launch(saxpy, new long[] {16}, null,
                List.of(KernelArg.Scalar.f32(1), new KernelArg.Buffer(x), new KernelArg.Buffer(y), KernelArg.Scalar.i64(-1))));
        assertTrue(bound.getMessage().contains("args[3]: -1 for n (expected: >= 0"), bound::getMessage);
        ArraydException dims = assertThrows(ArraydException.class, () -> h.launch(saxpy, new long[] {4, 4}, null,
                List.of(KernelArg.Scalar.f32(1), new KernelArg.Buffer(x), new KernelArg.Buffer(y), KernelArg.Scalar.i64(1))));
        assertTrue(dims.getMessage().contains("globalDims"), dims::getMessage);
        ArraydException arity = assertThrows(ArraydException.class, () -> h.launch(saxpy, new long[] {16}, null,
                List.of(KernelArg.Scalar.f32(1), new KernelArg.Buffer(x), new KernelArg.Buffer(y))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, arity.code());
        assertTrue(arity.getMessage().contains("args: 3 arguments (expected: 4 for saxpy("), arity::getMessage);
        MemRef odd = new MemRef(x.poolId(), x.offset() + 2, 4 * 8);
        ArraydException unaligned = assertThrows(ArraydException.class, () -> h.launch(saxpy, new long[] {16}, null,
                List.of(KernelArg.Scalar.f32(1), new KernelArg.Buffer(odd), new KernelArg.Buffer(y), KernelArg.Scalar.i64(1))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, unaligned.code());
        assertTrue(unaligned.getMessage().contains("args[1]: buffer") && unaligned.getMessage().contains("(expected: a multiple of 4"),
                unaligned::getMessage);
    }

    @Test
    void aSecondCompileOfTheSameModuleBuildsFromCachedBinaries() {
        OpenClKernelCompiler compiler = h.backend.openClCompiler();
        IrKernel vadd = new IrKernel("vadd_cached", List.of(
                new IrParam.Buffer("a", DType.F32, Access.READ, param("n")),
                new IrParam.Buffer("c", DType.F32, Access.WRITE, param("n")),
                new IrParam.Scalar("n", DType.I64, 0L, 1L << 40)),
                1, List.of(), List.of(let("i", gid(0)), when(lt(var("i"), param("n")),
                store("c", var("i"), add(load("a", var("i")), f32(1))))));
        KernelSource source = KernelSource.ir(new IrModule(List.of(vadd)));
        int before = compiler.sourceBuilds();
        try (KernelModule first = compiler.compile(source); KernelModule second = compiler.compile(source)) {
            assertEquals(before + 1, compiler.sourceBuilds(), "one build from source, then from binaries");
            MemRef a = floats(new float[] {1, 2, 3});
            MemRef c = h.alloc(12);
            h.launch(second.kernels().getFirst(), new long[] {3}, null, List.of(new KernelArg.Buffer(a), new KernelArg.Buffer(c),
                    KernelArg.Scalar.i64(3)));
            assertArrayEquals(new float[] {2, 3, 4}, floatsOf(c));
        }
    }

    @Test
    void everyDeviceRunsTheModule() {
        Assumptions.assumeTrue(h.devices.size() >= 2, () -> "only " + h.devices.size()
                + " OpenCL device(s); with PoCL set POCL_DEVICES=\"basic basic\" for two");
        for (Device d : h.devices.subList(1, h.devices.size())) {
            d.allocPool(7, 4096, d.info().baseAlignment());
            d.memsetZero(new MemRef(7, 0, 4096));
            NativeStream s = d.newStream("other");
            try {
                MemRef in = new MemRef(7, 0, 40);
                MemRef out = new MemRef(7, 64, 40);
                int[] values = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
                OpenClIrHarness.run(s, new DeviceCommand.Upload(MemorySegment.ofArray(values), in));
                OpenClIrHarness.run(s, new DeviceCommand.Launch(gather, new long[] {5}, null,
                        List.of(new KernelArg.Buffer(in), new KernelArg.Buffer(out))));
                int[] got = new int[10];
                OpenClIrHarness.run(s, new DeviceCommand.Download(out, MemorySegment.ofArray(got)));
                assertArrayEquals(new int[] {1, 3, 5, 7, 9, 0, 0, 0, 0, 0}, got, d.id().toString());
                ArraydException e = assertThrows(ArraydException.class, () -> OpenClIrHarness.run(s,
                        new DeviceCommand.Launch(gather, new long[] {8}, null, List.of(new KernelArg.Buffer(in),
                                new KernelArg.Buffer(out)))));
                assertEquals(ErrorCode.OUT_OF_RANGE, e.code(), e::toString);
            } finally {
                s.close();
                d.freePool(7);
            }
        }
    }
}
