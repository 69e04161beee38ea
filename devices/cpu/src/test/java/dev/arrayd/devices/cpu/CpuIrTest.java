package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.testing.ResourcesPerClass;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.ir.IrInterpreter;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.IrSamples;
import dev.arrayd.devices.api.ir.IrValidator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** IR kernels on the CPU backend: results, guards, OUT_OF_RANGE, launch checks, what is refused. */
@ResourcesPerClass("one CPU backend and its compiled kernels serve every test; its worker pool starts with the first split launch")
class CpuIrTest {

    @RegisterExtension
    static final SharedCpuIrHarness SHARED = new SharedCpuIrHarness();

    private static CpuIrHarness h() {
        return SHARED.get();
    }

    private static List<Kernel> kernels;

    @BeforeAll
    static void compileOnce() {
        kernels = h().compile(IrSamples.saxpy(), IrSamples.gatherUnchecked(), IrSamples.matmul());
    }

    private static float[] floats(MemorySegment s) {
        return s.toArray(ValueLayout.JAVA_FLOAT);
    }

    @Test
    void saxpyMatchesTheInterpreter() throws Exception {
        int n = 100_000; // large enough to be split across the worker threads
        MemRef x = h().alloc(4L * n);
        MemRef y = h().alloc(4L * n);
        for (int i = 0; i < n; i++) {
            h().segment(x).setAtIndex(ValueLayout.JAVA_FLOAT, i, i * 0.5f);
            h().segment(y).setAtIndex(ValueLayout.JAVA_FLOAT, i, 1000 - i);
        }
        MemorySegment xs = MemorySegment.ofArray(floats(h().segment(x)));
        MemorySegment ys = MemorySegment.ofArray(floats(h().segment(y)));
        h().launch(kernels.get(0), new long[] {n + 7}, null, List.of(KernelArg.Scalar.f32(3f), new KernelArg.Buffer(x),
                new KernelArg.Buffer(y), KernelArg.Scalar.i64(n)));
        var checked = IrValidator.check(new IrModule(List.of(IrSamples.saxpy())), "").getFirst();
        IrInterpreter.run(checked, new long[] {n + 7}, null, List.of(KernelArg.Scalar.f32(3f), xs, ys, KernelArg.Scalar.i64(n)));
        assertArrayEquals(ys.toArray(ValueLayout.JAVA_FLOAT), floats(h().segment(y)));
    }

    @Test
    void matmulIsRightAndFullyProven() throws Exception {
        int m = 5, k = 7, n = 3;
        MemRef a = h().alloc(4L * m * k);
        MemRef b = h().alloc(4L * k * n);
        MemRef c = h().alloc(4L * m * n);
        for (int i = 0; i < m * k; i++) {
            h().segment(a).setAtIndex(ValueLayout.JAVA_FLOAT, i, i % 5 - 2);
        }
        for (int i = 0; i < k * n; i++) {
            h().segment(b).setAtIndex(ValueLayout.JAVA_FLOAT, i, i % 3 + 1);
        }
        h().launch(kernels.get(2), new long[] {n + 1, m + 2}, null, List.of(new KernelArg.Buffer(a), new KernelArg.Buffer(b),
                new KernelArg.Buffer(c), KernelArg.Scalar.i32(m), KernelArg.Scalar.i32(n), KernelArg.Scalar.i32(k)));
        float[] got = floats(h().segment(c));
        for (int r = 0; r < m; r++) {
            for (int col = 0; col < n; col++) {
                float want = 0;
                for (int kk = 0; kk < k; kk++) {
                    want += (float) ((r * k + kk) % 5 - 2) * ((kk * n + col) % 3 + 1);
                }
                assertEquals(want, got[r * n + col], "c[" + r + "][" + col + "]");
            }
        }
    }

    @Test
    void anOutOfBoundsIndexIsOutOfRangeAndTouchesNothingElse() throws Exception {
        MemRef in = h().alloc(4 * 10);
        MemRef out = h().alloc(4 * 10);
        MemRef neighbour = h().alloc(4 * 64);
        h().segment(neighbour).fill((byte) 0x5a);
        for (int i = 0; i < 10; i++) {
            h().segment(in).setAtIndex(ValueLayout.JAVA_INT, i, 100 + i);
        }
        ArraydException e = assertThrows(ArraydException.class, () -> h().launch(kernels.get(1), new long[] {40}, null,
                List.of(new KernelArg.Buffer(in), new KernelArg.Buffer(out))));
        assertEquals(ErrorCode.OUT_OF_RANGE, e.code(), e::toString);
        assertTrue(e.getMessage().contains("kernel gather") && e.getMessage().matches(".*index \\d+ of buffer (in|out).*"),
                e::getMessage);
        int[] got = h().segment(out).toArray(ValueLayout.JAVA_INT);
        assertArrayEquals(new int[] {100, 102, 104, 106, 108, 0, 0, 0, 0, 0}, got);
        for (byte v : h().segment(neighbour).toArray(ValueLayout.JAVA_BYTE)) {
            assertEquals(0x5a, v);
        }
    }

    /**
     * Blocks of work-items whose accesses are all in bounds run without per-access guards (checked once per
     * block); the one block that reaches past the end runs guarded: the launch fails with OUT_OF_RANGE and
     * every in-bounds item still did its work.
     */
    @Test
    void aLargeLaunchWithOneItemOutOfBoundsFailsAndTheRestIsDone() throws Exception {
        int n = 200_000; // split across the worker threads: many blocks
        MemRef in = h().alloc(4L * (2 * n - 2)); // the last item reads in[2 * (n - 1)], one past the end
        MemRef out = h().alloc(4L * n);
        for (int i = 0; i < 2 * n - 2; i++) {
            h().segment(in).setAtIndex(ValueLayout.JAVA_INT, i, i ^ 0x55);
        }
        ArraydException e = assertThrows(ArraydException.class, () -> h().launch(kernels.get(1), new long[] {n}, null,
                List.of(new KernelArg.Buffer(in), new KernelArg.Buffer(out))));
        assertEquals(ErrorCode.OUT_OF_RANGE, e.code(), e::toString);
        assertTrue(e.getMessage().contains("index " + (2L * (n - 1)) + " of buffer in"), e::getMessage);
        int[] got = h().segment(out).toArray(ValueLayout.JAVA_INT);
        for (int i = 0; i < n - 1; i++) {
            if (got[i] != ((2 * i) ^ 0x55)) {
                assertEquals((2 * i) ^ 0x55, got[i], "out[" + i + "]");
            }
        }
        // and the same kernel over the items that are in bounds succeeds
        h().launch(kernels.get(1), new long[] {n - 1}, null, List.of(new KernelArg.Buffer(in), new KernelArg.Buffer(out)));
    }

    @Test
    void launchesAreCheckedAgainstWhatTheKernelDeclares() {
        MemRef x = h().alloc(4 * 10);
        MemRef y = h().alloc(4 * 10);
        ArraydException small = assertThrows(ArraydException.class, () -> h().launch(kernels.get(0), new long[] {16}, null,
                List.of(KernelArg.Scalar.f32(1), new KernelArg.Buffer(x), new KernelArg.Buffer(y), KernelArg.Scalar.i64(11))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, small.code());
        assertTrue(small.getMessage().contains("args[1]: buffer of 10 elements for x (expected: at least 11"), small::getMessage);
        ArraydException bound = assertThrows(ArraydException.class, () -> h().launch(kernels.get(0), new long[] {16}, null,
                List.of(KernelArg.Scalar.f32(1), new KernelArg.Buffer(x), new KernelArg.Buffer(y), KernelArg.Scalar.i64(-1))));
        assertTrue(bound.getMessage().contains("args[3]: -1 for n (expected: >= 0"), bound::getMessage);
        ArraydException dims = assertThrows(ArraydException.class, () -> h().launch(kernels.get(0), new long[] {4, 4}, null,
                List.of(KernelArg.Scalar.f32(1), new KernelArg.Buffer(x), new KernelArg.Buffer(y), KernelArg.Scalar.i64(1))));
        assertTrue(dims.getMessage().contains("globalDims"), dims::getMessage);
    }
}
