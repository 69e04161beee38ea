package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.RandomIrKernels;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The content digest a compile cache keys IR sources on: equal exactly when the trees are equal. */
class RecordDigestTest {

    record Pair(Object a, Object b) {}

    @Test
    void equalTreesBuiltApartHaveOneDigestAndUnequalOnesDiffer() {
        Map<String, IrKernel> byDigest = new HashMap<>();
        for (long seed = 0; seed < 300; seed++) {
            IrKernel k = RandomIrKernels.kernel(seed, seed % 3 == 0);
            IrKernel again = RandomIrKernels.kernel(seed, seed % 3 == 0);
            String d = RecordDigest.of(new IrModule(List.of(k)));
            assertEquals(d, RecordDigest.of(new IrModule(List.of(again))), "seed " + seed);
            IrKernel earlier = byDigest.putIfAbsent(d, k);
            assertTrue(earlier == null || earlier.equals(k), "seed " + seed + " shares a digest with another kernel");
        }
        assertTrue(byDigest.size() > 250, "the random kernels differ: " + byDigest.size());
    }

    @Test
    void boundariesAndTypesAreEncoded() {
        assertNotEquals(RecordDigest.of(List.of("ab", "c")), RecordDigest.of(List.of("a", "bc")));
        assertNotEquals(RecordDigest.of(List.of(List.of("a"), List.of("b"))), RecordDigest.of(List.of(List.of("a", "b"))));
        assertNotEquals(RecordDigest.of(new Pair(null, "x")), RecordDigest.of(new Pair("", "x")));
        assertNotEquals(RecordDigest.of(new Pair(1L, 0)), RecordDigest.of(new Pair(1, 0)));
        assertNotEquals(RecordDigest.of(DType.F32), RecordDigest.of("F32"));
        assertNotEquals(RecordDigest.of(new Pair("a", "b")), RecordDigest.of(List.of("a", "b")));
        assertNotEquals(RecordDigest.of("a", "b"), RecordDigest.of("ab"));
        assertEquals(RecordDigest.of(new Pair(List.of(1L, true), DType.I64)), RecordDigest.of(new Pair(List.of(1L, true), DType.I64)));
    }

    @Test
    void whatItCannotEncodeIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RecordDigest.of(new Pair(1.5, 0)));
        assertTrue(e.getMessage().contains("java.lang.Double"), e::getMessage);
        assertThrows(IllegalArgumentException.class, () -> RecordDigest.of(new Object()));
    }
}
