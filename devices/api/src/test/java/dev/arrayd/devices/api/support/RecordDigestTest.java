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
    void theEncodingIsTheDocumentedOneAcrossItsBufferBoundaries() throws Exception {
        // what is on disk stays found: the digest is SHA-256 over exactly the tagged, length-prefixed encoding
        String big = "x".repeat(5000) + "\u00e9";
        for (Object tree : List.<Object>of(new Pair("a", 1L), new Pair(big, List.of(DType.F32, 7, true)),
                new IrModule(List.of(RandomIrKernels.kernel(7, false), RandomIrKernels.kernel(8, true))))) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            encode(tree, out);
            java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
            assertEquals(java.util.HexFormat.of().formatHex(sha.digest(out.toByteArray())), RecordDigest.of(tree));
        }
    }

    /** The encoding, written out plainly. */
    private static void encode(Object v, java.io.ByteArrayOutputStream out) throws Exception {
        switch (v) {
            case null -> tag(out, 'N', 0);
            case String s -> text(out, 'S', s);
            case Long l -> tag(out, 'J', l);
            case Integer i -> tag(out, 'I', i);
            case Boolean b -> tag(out, 'Z', b ? 1 : 0);
            case Enum<?> e -> {
                text(out, 'E', e.getDeclaringClass().getName());
                text(out, 'e', e.name());
            }
            case List<?> list -> {
                tag(out, 'L', list.size());
                for (Object item : list) {
                    encode(item, out);
                }
            }
            case Record r -> {
                var components = r.getClass().getRecordComponents();
                text(out, 'R', r.getClass().getName());
                tag(out, 'r', components.length);
                for (var c : components) {
                    c.getAccessor().setAccessible(true);
                    encode(c.getAccessor().invoke(r), out);
                }
            }
            default -> throw new AssertionError(v.getClass().getName());
        }
    }

    private static void text(java.io.ByteArrayOutputStream out, char tag, String s) {
        byte[] b = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        tag(out, tag, b.length);
        out.writeBytes(b);
    }

    private static void tag(java.io.ByteArrayOutputStream out, char tag, long value) {
        out.write(tag);
        for (int i = 0; i < 8; i++) {
            out.write((int) (value >>> (56 - 8 * i)));
        }
    }

    @Test
    void whatItCannotEncodeIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RecordDigest.of(new Pair(1.5, 0)));
        assertTrue(e.getMessage().contains("java.lang.Double"), e::getMessage);
        assertThrows(IllegalArgumentException.class, () -> RecordDigest.of(new Object()));
    }
}
