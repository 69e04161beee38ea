package dev.arrayd.devices.cpu;

import org.junit.jupiter.api.Test;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Kernel threads run at a raised nice value; the daemon's other threads keep theirs. */
class ComputeThreadPriorityTest {

    @Test
    void raisesTheCallingThreadAloneAndCapsAtNineteen() throws Exception {
        Optional<Integer> base = ComputeThreadPriority.currentNice();
        assumeTrue(base.isPresent(), "nice values are readable here (Linux)");
        CompletableFuture<int[]> seen = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            int before = ComputeThreadPriority.currentNice().orElseThrow();
            int after = ComputeThreadPriority.lowerCurrentThread(3).orElseThrow();
            int capped = ComputeThreadPriority.lowerCurrentThread(40).orElseThrow();
            seen.complete(new int[] {before, after, capped, ComputeThreadPriority.currentNice().orElseThrow()});
        });
        t.start();
        int[] v = seen.get(30, TimeUnit.SECONDS);
        t.join();
        assertEquals(base.get(), v[0], "a new thread starts at its creator's nice value");
        assertEquals(Math.min(19, base.get() + 3), v[1]);
        assertEquals(19, v[2]);
        assertEquals(19, v[3]);
        assertEquals(base, ComputeThreadPriority.currentNice(), "only the calling thread changed");
    }

    @Test
    void optionsRefuseANiceOutsideZeroToNineteen() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CpuOptions.defaults().withComputeNice(20));
        assertEquals("computeNice: 20 (expected: 0..19, 0 to keep kernel threads at the daemon's priority)", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CpuOptions.defaults().withComputeNice(-1));
        assertEquals(CpuOptions.DEFAULT_COMPUTE_NICE, CpuOptions.defaults().computeNice());
    }
}
