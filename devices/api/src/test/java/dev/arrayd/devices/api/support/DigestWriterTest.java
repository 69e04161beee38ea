package dev.arrayd.devices.api.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The encoding content digests are written in: what is on disk stays found, and no two values share bytes. */
class DigestWriterTest {

    @Test
    void theEncodingIsTheDocumentedOneAcrossItsBufferBoundaries() throws Exception {
        String big = "x".repeat(5000) + "\u00e9\ud83d\ude00";
        long[] numbers = {0, 1, -1, 63, 64, -64, -65, 127, 128, 1L << 62, Long.MAX_VALUE, Long.MIN_VALUE, Integer.MIN_VALUE};
        DigestWriter d = new DigestWriter();
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        for (int round = 0; round < 300; round++) { // past the writer's 4 KiB buffer many times, at every offset
            for (long n : numbers) {
                d.tag('n', n + round);
                tag(expected, 'n', n + round);
            }
            String s = round % 7 == 0 ? big : "k" + round;
            d.text('s', s);
            text(expected, 's', s);
        }
        d.text('z', null);
        tag(expected, 'N', 0);
        assertEquals(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(expected.toByteArray())), d.hex());
    }

    @Test
    void boundariesAndTagsAreEncoded() {
        assertNotEquals(hex(w -> w.text('s', "ab").text('s', "c")), hex(w -> w.text('s', "a").text('s', "bc")));
        assertNotEquals(hex(w -> w.tag('a', 1)), hex(w -> w.tag('b', 1)));
        assertNotEquals(hex(w -> w.tag('a', 128)), hex(w -> w.tag('a', 0).tag('a', 1)));
        assertNotEquals(hex(w -> w.text('s', null)), hex(w -> w.text('s', "")));
        assertEquals(hex(w -> w.tag('a', -7).text('s', "q")), hex(w -> w.tag('a', -7).text('s', "q")));
    }

    private static String hex(java.util.function.Consumer<DigestWriter> write) {
        DigestWriter w = new DigestWriter();
        write.accept(w);
        return w.hex();
    }

    private static void text(ByteArrayOutputStream out, char tag, String s) {
        tag(out, tag, s.length()); // a string's UTF-16 code units, high byte first
        for (char c : s.toCharArray()) {
            out.write(c >>> 8);
            out.write(c & 0xff);
        }
    }

    /** The tag, then the value zigzag-mapped (0, -1, 1, -2, ... to 0, 1, 2, 3, ...) in groups of seven bits, low first. */
    private static void tag(ByteArrayOutputStream out, char tag, long value) {
        out.write(tag);
        BigInteger z = BigInteger.valueOf(value).shiftLeft(1);
        if (value < 0) {
            z = z.negate().subtract(BigInteger.ONE);
        }
        do {
            int low = z.intValue() & 0x7f;
            z = z.shiftRight(7);
            out.write(z.signum() == 0 ? low : low | 0x80);
        } while (z.signum() != 0);
    }
}
