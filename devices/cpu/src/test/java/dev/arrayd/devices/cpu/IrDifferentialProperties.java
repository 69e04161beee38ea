package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.Half;
import dev.arrayd.devices.api.ir.IrInterpreter;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.IrValidator;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.junit.jupiter.api.Assumptions;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Random well-typed IR kernels give the same results on the reference interpreter and on the CPU
 * backend: integer outputs bit for bit, f32 and f16 outputs bit for bit (NaNs equal whatever their
 * payload) except right after exp / log / tanh / pow, where they may differ by at most
 * {@link #ULP_BOUND} ulps (glibc's expf & co. against Java's correctly rounded-ish StrictMath-class
 * functions narrowed from double). Launches that hit a guard must fail with OUT_OF_RANGE on both,
 * with the same buffers afterwards. Each try compiles {@link #BATCH} kernels into one module (one gcc
 * run) and runs each with random inputs.
 */
class IrDifferentialProperties {

    static final int ULP_BOUND = 4;
    static final int BATCH = 8;

    private static CpuIrHarness h;

    @BeforeContainer
    static void open() {
        h = new CpuIrHarness();
    }

    @AfterContainer
    static void close() {
        h.close();
    }

    @Property(tries = 12)
    void interpreterAndCpuAgree(@ForAll long seed) throws Exception {
        Assumptions.assumeTrue(h.available(), "cpu backend unavailable");
        RandomIrPrograms gen = new RandomIrPrograms(seed);
        List<IrKernel> kernels = new ArrayList<>();
        List<Boolean> approximate = new ArrayList<>();
        for (int i = 0; i < BATCH; i++) {
            RandomIrPrograms.Program p = gen.kernel("k" + i);
            kernels.add(p.kernel());
            approximate.add(p.approximate());
        }
        List<CheckedKernel> checked = IrValidator.check(new IrModule(kernels), "");
        List<Kernel> compiled = h.compile(kernels.toArray(IrKernel[]::new));
        Random data = new Random(seed ^ 0x5eed);
        for (int i = 0; i < BATCH; i++) {
            h.reset();
            runBoth(checked.get(i), compiled.get(i), approximate.get(i), data, seed);
        }
    }

    /** Kernels with local arrays and barriers: the CPU's phased groups against the interpreter's threads. */
    @Property(tries = 6)
    void interpreterAndCpuAgreeOnWorkGroups(@ForAll long seed) throws Exception {
        Assumptions.assumeTrue(h.available(), "cpu backend unavailable");
        RandomIrPrograms gen = new RandomIrPrograms(seed);
        List<IrKernel> kernels = new ArrayList<>();
        List<Boolean> approximate = new ArrayList<>();
        for (int i = 0; i < BATCH; i++) {
            RandomIrPrograms.Program p = gen.groupKernel("g" + i);
            kernels.add(p.kernel());
            approximate.add(p.approximate());
        }
        List<CheckedKernel> checked = IrValidator.check(new IrModule(kernels), "");
        List<Kernel> compiled = h.compile(kernels.toArray(IrKernel[]::new));
        Random data = new Random(seed ^ 0x6a0b);
        for (int i = 0; i < BATCH; i++) {
            h.reset();
            runBoth(checked.get(i), compiled.get(i), approximate.get(i), data, seed);
        }
    }

    private void runBoth(CheckedKernel k, Kernel cpu, boolean approximate, Random data, long seed) throws Exception {
        int n = RandomIrPrograms.EXTENT;
        int[] bytesPer = {4, 4, 4, 4, 2, 8};
        List<MemRef> refs = new ArrayList<>();
        List<MemorySegment> heap = new ArrayList<>();
        for (int b = 0; b < 6; b++) {
            MemRef ref = h.alloc((long) bytesPer[b] * n);
            MemorySegment s = h.segment(ref);
            for (long off = 0; off < s.byteSize(); off += 4) {
                int v = switch (b) {
                    case 1 -> Float.floatToRawIntBits((data.nextFloat() - 0.5f) * (1 << data.nextInt(12)));
                    default -> data.nextInt(4) == 0 ? data.nextInt() : data.nextInt(100) - 50;
                };
                s.set(ValueLayout.JAVA_INT_UNALIGNED, off, v);
            }
            refs.add(ref);
            heap.add(MemorySegment.ofArray(s.toArray(ValueLayout.JAVA_BYTE)));
        }
        KernelArg.Scalar sArg = KernelArg.Scalar.i32(data.nextInt(17));
        KernelArg.Scalar tArg = KernelArg.Scalar.f32(data.nextFloat() * 8 - 4);
        List<KernelArg> cpuArgs = new ArrayList<>();
        List<Object> interpArgs = new ArrayList<>();
        for (int b = 0; b < 6; b++) {
            cpuArgs.add(new KernelArg.Buffer(refs.get(b)));
            interpArgs.add(heap.get(b));
        }
        cpuArgs.add(sArg);
        cpuArgs.add(tArg);
        interpArgs.add(sArg);
        interpArgs.add(tArg);
        long[] grid = {RandomIrPrograms.GRID};
        ErrorCode cpuCode = null;
        ErrorCode refCode = null;
        try {
            h.launch(cpu, grid, null, cpuArgs);
        } catch (ArraydException e) {
            cpuCode = e.code();
        }
        try {
            IrInterpreter.run(k, grid, null, interpArgs);
        } catch (ArraydException e) {
            refCode = e.code();
        }
        String what = "seed " + seed + ", kernel " + k.kernel();
        assertEquals(refCode, cpuCode, what);
        if (cpuCode != null && cpuCode != ErrorCode.OUT_OF_RANGE) {
            fail("unexpected " + cpuCode + " for " + what);
        }
        for (int b = 2; b < 6; b++) {
            MemorySegment got = h.segment(refs.get(b));
            MemorySegment want = heap.get(b);
            for (int i = 0; i < n; i++) {
                String at = what + "\nbuffer " + b + "[" + i + "]";
                switch (b) {
                    case 3 -> {
                        float g = got.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
                        float w = want.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
                        checkFloat(w, g, approximate ? ULP_BOUND : 0, at);
                    }
                    case 4 -> checkFloat(Half.f16ToF32(want.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i)),
                            Half.f16ToF32(got.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i)), 0, at);
                    case 5 -> assertEquals(want.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i),
                            got.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i), at);
                    default -> assertEquals(want.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i),
                            got.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i), at);
                }
            }
        }
    }

    /** Equal bits, or both NaN, or within {@code ulps} (±0 count as equal). */
    static void checkFloat(float want, float got, int ulps, String at) {
        if (Float.isNaN(want) && Float.isNaN(got)) {
            return;
        }
        if (Float.floatToRawIntBits(want) == Float.floatToRawIntBits(got)) {
            return;
        }
        if (ulps > 0 && !Float.isNaN(want) && !Float.isNaN(got) && Math.abs(ordered(want) - ordered(got)) <= ulps) {
            return;
        }
        fail(at + ": interpreter " + want + " (0x" + Integer.toHexString(Float.floatToRawIntBits(want)) + "), cpu " + got
                + " (0x" + Integer.toHexString(Float.floatToRawIntBits(got)) + "), allowed " + ulps + " ulp");
    }

    /** Floats mapped onto integers so that adjacent floats differ by 1 (and -0 == +0). */
    private static long ordered(float f) {
        int bits = Float.floatToRawIntBits(f);
        return bits < 0 ? -(long) (bits & 0x7fffffff) : bits;
    }
}
