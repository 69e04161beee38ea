package dev.arrayd.devices.cpu;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GridSplitterProperties {

    @Property
    void chunksCoverEveryItemExactlyOnce(@ForAll @IntRange(min = 1, max = 40) int gx,
                                         @ForAll @IntRange(min = 1, max = 40) int gy,
                                         @ForAll @IntRange(min = 1, max = 40) int gz,
                                         @ForAll @IntRange(min = 1, max = 64) int maxParts) {
        long[] global = {gx, gy, gz};
        long[] out = new long[maxParts * GridSplitter.CHUNK_LONGS];
        int chunks = GridSplitter.split(global, maxParts, out);
        assertTrue(chunks >= 1 && chunks <= maxParts, "chunks " + chunks);
        int[] seen = new int[gx * gy * gz];
        for (int c = 0; c < chunks; c++) {
            int at = c * GridSplitter.CHUNK_LONGS;
            for (int d = 0; d < 3; d++) {
                assertTrue(0 <= out[at + d] && out[at + d] < out[at + 3 + d] && out[at + 3 + d] <= global[d],
                        "chunk " + c + " dim " + d + " is a non-empty part of the grid");
            }
            for (long z = out[at + 2]; z < out[at + 5]; z++) {
                for (long y = out[at + 1]; y < out[at + 4]; y++) {
                    for (long x = out[at]; x < out[at + 3]; x++) {
                        seen[(int) ((z * gy + y) * gx + x)]++;
                    }
                }
            }
        }
        for (int i = 0; i < seen.length; i++) {
            assertEquals(1, seen[i], "item " + i);
        }
    }

    @Property
    void splitsOnlyTheOutermostDimensionLongerThanOne(@ForAll @IntRange(min = 1, max = 1000) int gx,
                                                      @ForAll @IntRange(min = 1, max = 3) int gy,
                                                      @ForAll @IntRange(min = 1, max = 16) int maxParts) {
        long[] global = {gx, gy, 1};
        long[] out = new long[maxParts * GridSplitter.CHUNK_LONGS];
        int chunks = GridSplitter.split(global, maxParts, out);
        int splitDim = gy > 1 ? 1 : 0;
        assertEquals(Math.min(maxParts, global[splitDim]), chunks);
        for (int c = 0; c < chunks; c++) {
            int at = c * GridSplitter.CHUNK_LONGS;
            for (int d = 0; d < 3; d++) {
                if (d != splitDim) {
                    assertEquals(0, out[at + d]);
                    assertEquals(global[d], out[at + 3 + d]);
                }
            }
            long size = out[at + 3 + splitDim] - out[at + splitDim];
            long even = global[splitDim] / chunks;
            assertTrue(size == even || size == even + 1, "chunk sizes differ by at most one");
        }
    }
}
