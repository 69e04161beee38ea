package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
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
    void aStreamWorkerRunsItsCommandsAtTheConfiguredNice() throws Exception {
        Optional<Integer> base = ComputeThreadPriority.currentNice();
        assumeTrue(base.isPresent(), "nice values are readable here (Linux)");
        assertEquals(Math.min(19, base.get() + 4), workerNice(4));
        assertEquals(base.get(), workerNice(0), "0 keeps the daemon's priority");
    }

    @Test
    void optionsRefuseANiceOutsideZeroToNineteen() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CpuOptions.defaults().withComputeNice(20));
        assertEquals("computeNice: 20 (expected: 0..19, 0 to keep kernel threads at the daemon's priority)", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CpuOptions.defaults().withComputeNice(-1));
        assertEquals(CpuOptions.DEFAULT_COMPUTE_NICE, CpuOptions.defaults().computeNice());
    }

    /** The nice value seen by the callback of a command, which runs on the stream's worker thread. */
    private static int workerNice(int computeNice) throws Exception {
        try (CpuBackend backend = new CpuBackend(CpuOptions.defaults().withDeviceMemoryBytes(1 << 20)
                .withComputeNice(computeNice))) {
            Device cpu = backend.openDevices(1).getFirst();
            cpu.allocPool(1, 4096, 64);
            NativeStream stream = cpu.newStream("nice-probe");
            try {
                CompletableFuture<Integer> nice = new CompletableFuture<>();
                stream.submit(new DeviceCommand.Fill(new MemRef(1, 0, 64), 0, 1), new CommandCallback() {
                    @Override
                    public void completed(long deviceNanos) {
                        nice.complete(ComputeThreadPriority.currentNice().orElse(-100));
                    }

                    @Override
                    public void failed(ArraydException cause) {
                        nice.completeExceptionally(cause);
                    }
                });
                return nice.get(30, TimeUnit.SECONDS);
            } finally {
                stream.close();
                cpu.freePool(1);
            }
        }
    }
}
