package dev.arrayd.devices.cuda;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Which CUDA memset a fill becomes (pure, tested). The driver's memsets need the destination aligned
 * to their element width; an unaligned 2- or 4-byte fill, or an 8-byte one not 4-aligned, uploads the
 * repeated pattern through staging instead. An 8-byte pattern whose halves are equal is one 32-bit
 * memset; otherwise two strided ones (low words, then high words).
 */
enum FillPath {
    D8, D16, D32, D2D32_PAIR, STAGED;

    static FillPath choose(int width, long address, long pattern) {
        return switch (width) {
            case 1 -> D8;
            case 2 -> address % 2 == 0 ? D16 : STAGED;
            case 4 -> address % 4 == 0 ? D32 : STAGED;
            default -> address % 4 != 0 ? STAGED : (int) pattern == (int) (pattern >>> 32) ? D32 : D2D32_PAIR;
        };
    }

    private static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Fills {@code out} (a multiple of {@code width} bytes) with the little-endian pattern. */
    static void repeat(MemorySegment out, long pattern, int width) {
        for (long i = 0; i < out.byteSize(); i++) {
            out.set(ValueLayout.JAVA_BYTE, i, (byte) (pattern >>> (8 * (i % width))));
        }
    }
}
