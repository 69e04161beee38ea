package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LaunchGeometryTest {

    private static final LaunchGeometry.Limits LIMITS = new LaunchGeometry.Limits(1024, new int[] {1024, 1024, 64},
            new long[] {Integer.MAX_VALUE, 65535, 65535});

    private static LaunchGeometry of(long[] global, long[] local) {
        return LaunchGeometry.of(global, local, 256, LIMITS);
    }

    @Test
    void localDimsGiveTheBlockAndGlobalOverLocalTheGrid() {
        assertEquals(new LaunchGeometry(2, 2, 2, 4, 3, 2), of(new long[] {8, 6, 4}, new long[] {4, 3, 2}));
        assertEquals(new LaunchGeometry(8, 8, 8, 8, 4, 2), of(new long[] {64, 32, 16}, new long[] {8, 4, 2}));
        assertEquals(new LaunchGeometry(4, 1, 1, 256, 1, 1), of(new long[] {1024}, new long[] {256}));
    }

    @Test
    void withoutLocalDimsTheBlockDividesTheGlobalSizeExactly() {
        assertEquals(new LaunchGeometry(4096, 1, 1, 256, 1, 1), of(new long[] {1 << 20}, null));
        assertEquals(new LaunchGeometry(4, 1, 1, 250, 1, 1), of(new long[] {1000}, null));
        assertEquals(new LaunchGeometry(1, 1, 1, 1, 1, 1), of(new long[] {1}, null));
        assertEquals(new LaunchGeometry(1000003, 1, 1, 1, 1, 1), of(new long[] {1000003}, null)); // a prime: blocks of 1
        // 3-D: x takes what it can of the 256-thread budget, y and z share the rest
        LaunchGeometry g = of(new long[] {5, 7, 3}, null);
        assertEquals(new LaunchGeometry(1, 1, 1, 5, 7, 3), g);
        LaunchGeometry big = of(new long[] {64, 32, 16}, null);
        assertEquals(64L * 32 * 16, (long) big.gridX() * big.blockX() * big.gridY() * big.blockY() * big.gridZ() * big.blockZ());
        assertTrue(big.threadsPerBlock() <= 256);
    }

    @Test
    void everyWorkItemIsCoveredExactlyOnce() {
        for (long n = 1; n <= 2000; n += 37) {
            LaunchGeometry g = of(new long[] {n, 3}, null);
            assertEquals(n, (long) g.gridX() * g.blockX(), "x of " + n);
            assertEquals(3, (long) g.gridY() * g.blockY(), "y of " + n);
            assertTrue(g.threadsPerBlock() <= 256);
        }
    }

    @Test
    void badDimsAreInvalidArgumentNamingTheValue() {
        assertBad(() -> of(new long[] {1000}, new long[] {64}), "localDims[0]: 64 (expected: a divisor of globalDims[0] = 1000)");
        assertBad(() -> of(new long[] {0}, null), "globalDims[0]: 0");
        assertBad(() -> of(new long[] {1, 1, 1, 1}, null), "1 to 3 dims");
        assertBad(() -> of(new long[] {1024}, new long[] {4, 4}), "localDims: [4, 4]");
        assertBad(() -> of(new long[] {2048}, new long[] {2048}), "localDims[0]: 2048");
        assertBad(() -> of(new long[] {64, 64}, new long[] {64, 32}), "at most 1024 work-items per group");
        assertBad(() -> of(new long[] {1, 65536 * 2L}, new long[] {1, 1}), "globalDims[1]: 131072");
    }

    private static void assertBad(org.junit.jupiter.api.function.Executable call, String fragment) {
        ArraydException e = assertThrows(ArraydException.class, call);
        assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().contains(fragment), () -> e.getMessage() + " should contain " + fragment);
    }

    @Test
    void largestDivisor() {
        assertEquals(256, LaunchGeometry.largestDivisorAtMost(1 << 20, 256));
        assertEquals(250, LaunchGeometry.largestDivisorAtMost(1000, 256));
        assertEquals(7, LaunchGeometry.largestDivisorAtMost(7, 256));
        assertEquals(1, LaunchGeometry.largestDivisorAtMost(257, 256));
        assertEquals(1, LaunchGeometry.largestDivisorAtMost(10, 1));
    }
}
