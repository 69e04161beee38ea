package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.IrSamples;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The checks and extents of an IR launch, and what its guard words mean afterwards. */
class IrLaunchTest {

    private static final CheckedKernel SAXPY = CudaIrAssemblerTest.checked(IrSamples.saxpy()).getFirst();
    private static final CheckedKernel GATHER = CudaIrAssemblerTest.checked(IrSamples.gatherUnchecked()).getFirst();
    private static final CheckedKernel GROUP_SUM = CudaIrAssemblerTest.checked(IrSamples.groupSum()).getFirst();

    private static KernelArg buffer(long bytes) {
        return new KernelArg.Buffer(new MemRef(1, 0, bytes));
    }

    @Test
    void extentsAreElementCountsByParameterPosition() {
        IrLaunch l = IrLaunch.prepare(SAXPY, new long[] {100}, null,
                List.of(KernelArg.Scalar.f32(2), buffer(400), buffer(404), KernelArg.Scalar.i64(100)));
        assertArrayEquals(new long[] {0, 100, 101, 0}, l.extents());
        assertNull(l.localDims(), "no declared local size: the backend chooses");
        assertArrayEquals(new long[] {32}, IrLaunch.prepare(SAXPY, new long[] {64}, new long[] {32},
                List.of(KernelArg.Scalar.f32(2), buffer(400), buffer(404), KernelArg.Scalar.i64(100))).localDims(),
                "the caller's local size when the kernel declares none");
    }

    @Test
    void aDeclaredLocalSizeIsWhatTheLaunchRunsWith() {
        IrLaunch l = IrLaunch.prepare(GROUP_SUM, new long[] {1024}, null, List.of(buffer(4096), buffer(16)));
        assertArrayEquals(new long[] {256}, l.localDims());
        assertArrayEquals(new long[] {1024, 4}, l.extents());
        ArraydException other = assertThrows(ArraydException.class,
                () -> IrLaunch.prepare(GROUP_SUM, new long[] {1024}, new long[] {128}, List.of(buffer(4096), buffer(16))));
        assertTrue(other.getMessage().startsWith("localDims: [128]"), other::getMessage);
        ArraydException ragged = assertThrows(ArraydException.class,
                () -> IrLaunch.prepare(GROUP_SUM, new long[] {1000}, null, List.of(buffer(4096), buffer(16))));
        assertTrue(ragged.getMessage().startsWith("globalDims[0]: 1000"), ragged::getMessage);
    }

    @Test
    void whatTheProofsAssumedIsCheckedNamingTheArgument() {
        ArraydException small = assertThrows(ArraydException.class, () -> IrLaunch.prepare(SAXPY, new long[] {16}, null,
                List.of(KernelArg.Scalar.f32(1), buffer(40), buffer(40), KernelArg.Scalar.i64(11))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, small.code());
        assertTrue(small.getMessage().contains("args[1]: buffer of 10 elements for x (expected: at least 11"), small::getMessage);
        ArraydException bound = assertThrows(ArraydException.class, () -> IrLaunch.prepare(SAXPY, new long[] {16}, null,
                List.of(KernelArg.Scalar.f32(1), buffer(40), buffer(40), KernelArg.Scalar.i64(-1))));
        assertTrue(bound.getMessage().contains("args[3]: -1 for n (expected: >= 0"), bound::getMessage);
        ArraydException dims = assertThrows(ArraydException.class, () -> IrLaunch.prepare(SAXPY, new long[] {4, 4}, null,
                List.of(KernelArg.Scalar.f32(1), buffer(40), buffer(40), KernelArg.Scalar.i64(1))));
        assertTrue(dims.getMessage().startsWith("globalDims: [4, 4]"), dims::getMessage);
        ArraydException none = assertThrows(ArraydException.class, () -> IrLaunch.prepare(SAXPY, null, null,
                List.of(KernelArg.Scalar.f32(1), buffer(40), buffer(40), KernelArg.Scalar.i64(1))));
        assertEquals("globalDims: null (expected: 1 dims, as kernel saxpy declares)", none.getMessage());
    }

    @Test
    void guardWordsBecomeOutOfRangeNamingKernelBufferAndIndex() {
        IrLaunch l = IrLaunch.prepare(GATHER, new long[] {40}, null, List.of(buffer(40), buffer(40)));
        assertNull(l.failure(GATHER, 0, 0), "no guard fired");
        ArraydException in = l.failure(GATHER, 1, 22);
        assertEquals(ErrorCode.OUT_OF_RANGE, in.code());
        assertTrue(in.getMessage().startsWith("kernel gather: index 22 of buffer in (args[0], 10 elements) is out of range"),
                in::getMessage);
        ArraydException out = l.failure(GATHER, 2, 35);
        assertTrue(out.getMessage().startsWith("kernel gather: index 35 of buffer out (args[1], 10 elements)"), out::getMessage);
        ArraydException garbage = l.failure(GATHER, -7, 1);
        assertEquals(ErrorCode.OUT_OF_RANGE, garbage.code(), "a corrupt word still fails the launch");
    }
}
