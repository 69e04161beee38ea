package dev.arrayd.devices.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.IrValidator;
import dev.arrayd.devices.api.ir.IrSamples;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The IR kernels the CUDA benchmark times (a tiled matmul with local memory and barriers; a vadd proven in
 * bounds and one whose guards stay) validate, compile and compute right on the CPU, so the GPU check kit
 * does not find out first; and the guarded vadd does keep its guards.
 */
class IrBenchmarkKernelsTest {

    private CpuIrHarness h;

    @BeforeEach
    void open() {
        h = new CpuIrHarness();
        Assumptions.assumeTrue(h.available(), () -> "cpu backend unavailable: " + h.backend.unavailableReason().orElse(""));
    }

    @AfterEach
    void close() {
        h.close();
    }

    @Test
    void theTiledMatmulMatchesPlainJava() throws Exception {
        int n = 48;
        Kernel k = h.compile(IrSamples.tiledMatmul()).getFirst();
        MemRef a = h.alloc(4L * n * n);
        MemRef b = h.alloc(4L * n * n);
        MemRef c = h.alloc(4L * n * n);
        float[] av = new float[n * n];
        float[] bv = new float[n * n];
        for (int i = 0; i < n * n; i++) {
            av[i] = (i % 7) * 0.5f - 1;
            bv[i] = (i % 5) * 0.25f;
        }
        MemorySegment.copy(av, 0, h.segment(a), ValueLayout.JAVA_FLOAT, 0, n * n);
        MemorySegment.copy(bv, 0, h.segment(b), ValueLayout.JAVA_FLOAT, 0, n * n);
        h.launch(k, new long[] {n, n}, new long[] {16, 16}, List.of(new KernelArg.Buffer(a), new KernelArg.Buffer(b),
                new KernelArg.Buffer(c), KernelArg.Scalar.i32(n)));
        for (int row = 0; row < n; row++) {
            for (int col = 0; col < n; col++) {
                float want = 0;
                for (int kk = 0; kk < n; kk++) {
                    want += av[row * n + kk] * bv[kk * n + col];
                }
                assertEquals(want, h.segment(c).getAtIndex(ValueLayout.JAVA_FLOAT, (long) row * n + col), 1e-4f,
                        "c[" + row + "][" + col + "]");
            }
        }
    }

    @Test
    void bothVaddsSumAndOnlyTheGuardedOneKeepsItsGuards() throws Exception {
        List<Kernel> ks = h.compile(IrSamples.vaddProven(), IrSamples.vaddGuarded());
        int n = 1000;
        for (Kernel k : ks) {
            MemRef x = h.alloc(4L * n);
            MemRef y = h.alloc(4L * n);
            MemRef out = h.alloc(4L * n);
            for (int i = 0; i < n; i++) {
                h.segment(x).setAtIndex(ValueLayout.JAVA_FLOAT, i, i);
                h.segment(y).setAtIndex(ValueLayout.JAVA_FLOAT, i, 2 * i);
            }
            h.launch(k, new long[] {n}, null, List.of(new KernelArg.Buffer(x), new KernelArg.Buffer(y), new KernelArg.Buffer(out),
                    KernelArg.Scalar.i64(n), KernelArg.Scalar.i64(n)));
            for (int i = 0; i < n; i++) {
                assertEquals(3f * i, h.segment(out).getAtIndex(ValueLayout.JAVA_FLOAT, i), k.name() + " out[" + i + "]");
            }
        }
        // the proofs are the validator's (a kernel found in the compile cache by its content carries launch checks only)
        List<CheckedKernel> checked = IrValidator.check(new IrModule(List.of(IrSamples.vaddProven(), IrSamples.vaddGuarded())),
                "ir");
        CheckedKernel proven = checked.get(0);
        CheckedKernel guarded = checked.get(1);
        assertEquals(0, proven.guardsEmitted(), "vadd_proven: every access proven");
        assertEquals(3, guarded.guardsEmitted(), "vadd_guarded: m and n unrelated, so x, y and out keep their guards");
    }
}
