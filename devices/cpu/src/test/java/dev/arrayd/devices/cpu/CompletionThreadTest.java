package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.support.ThreadNice;
import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A kernel runs at the lowered priority and its completion at the daemon's, on the device's completion
 * thread; with nothing lowered the worker calls back itself.
 */
class CompletionThreadTest {

    private static final int DELTA = 4;

    /** Spins until its flag is set: the test sees the worker's priority while the kernel runs. */
    private static final String HOLD = """
            ARRAYD_KERNEL void hold(ARRAYD_ITEM, int32_t *flag) {
                while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0) { }
            }
            """;

    @Test
    void theKernelRunsLoweredAndItsCompletionOnTheCompletionThreadAtTheDaemonsPriority() throws Exception {
        assumeTrue(ComputeThreadPriority.supported(), "nice values can be changed here (Linux)");
        Seen seen = holdOnce(DELTA);
        assertEquals(seen.base + DELTA, seen.workerDuringKernel, "the kernel runs lowered");
        assertEquals(seen.base, seen.callbackNice, "the completion runs at the daemon's priority");
        assertEquals(seen.base + DELTA, seen.workerAfter, "the worker stays lowered");
        assertTrue(seen.onCompletionThread, "the device's completion thread calls back");
    }

    @Test
    void withNothingLoweredTheWorkerCallsBackItself() throws Exception {
        assumeTrue(ComputeThreadPriority.supported(), "nice values can be read here (Linux)");
        Seen seen = holdOnce(0);
        assertEquals(seen.base, seen.workerDuringKernel);
        assertEquals(seen.base, seen.callbackNice);
        assertFalse(seen.hasCompletionThread, "no completion thread when kernels are not lowered");
        assertTrue(seen.onWorker, "the worker calls back");
    }

    @Test
    void closingAStreamWaitsForTheCompletionsHandedOver() throws Exception {
        assumeTrue(ComputeThreadPriority.supported(), "nice values can be changed here (Linux)");
        int commands = 200;
        try (CpuBackend backend = backend(DELTA)) {
            CpuDevice cpu = (CpuDevice) backend.openDevices(1).getFirst();
            assertNotNull(cpu.completions(), "lowered kernels: a completion thread");
            cpu.allocPool(1, 4096, 64);
            CpuStream stream = (CpuStream) cpu.newStream("handed-over");
            List<Long> order = java.util.Collections.synchronizedList(new ArrayList<>());
            for (long i = 0; i < commands; i++) {
                long n = i;
                fillThen(stream, n, () -> order.add(n));
            }
            stream.close();
            assertEquals(commands, order.size(), "close() returned only after every callback had run");
            for (int i = 0; i < commands; i++) {
                assertEquals(i, order.get(i), "callbacks in the stream's order");
            }
            assertTrue(stream.isIdle());
            cpu.freePool(1);
        }
    }

    @Test
    void aStreamClosedFromItsOwnCallbackEndsOnceTheCallbackReturns() throws Exception {
        assumeTrue(ComputeThreadPriority.supported(), "nice values can be changed here (Linux)");
        try (CpuBackend backend = backend(DELTA)) {
            CpuDevice cpu = (CpuDevice) backend.openDevices(1).getFirst();
            cpu.allocPool(1, 4096, 64);
            CpuStream stream = (CpuStream) cpu.newStream("closed-from-callback");
            CompletableFuture<Boolean> closedInCallback = fillThen(stream, 7, () -> {
                stream.close(); // on the completion thread: must not wait for the worker, which waits for this callback
                return cpu.completions().isCurrent();
            });
            assertTrue(closedInCallback.get(30, TimeUnit.SECONDS), "closed on the completion thread");
            stream.close(); // from here it waits for the worker, which ends now that the callback has returned
            assertTrue(stream.isIdle());
            cpu.freePool(1);
        }
    }

    @Test
    void aDeviceIsNotClosedFromOneOfItsCompletionCallbacks() throws Exception {
        assumeTrue(ComputeThreadPriority.supported(), "nice values can be changed here (Linux)");
        try (CpuBackend backend = backend(DELTA)) {
            CpuDevice cpu = (CpuDevice) backend.openDevices(1).getFirst();
            cpu.allocPool(1, 4096, 64);
            CpuStream stream = (CpuStream) cpu.newStream("device-closed-from-callback");
            CompletableFuture<String> refused = fillThen(stream, 7, () -> {
                try {
                    cpu.close();
                    return "closed";
                } catch (ArraydException e) {
                    return e.code() + ": " + e.getMessage();
                }
            });
            assertEquals("FAILED_PRECONDITION: close of cpu:0 from one of its completion callbacks (expected: another"
                    + " thread; callbacks must be fast)", refused.get(30, TimeUnit.SECONDS));
            stream.close();
            cpu.freePool(1);
        }
    }

    /**
     * Submits a fill of the first 64 bytes of pool 1 with {@code value}; the returned future gets what
     * {@code inCallback} returns when run in the fill's completion (or what it throws, or the fill's failure).
     */
    private static <T> CompletableFuture<T> fillThen(CpuStream stream, long value, Callable<T> inCallback) {
        CompletableFuture<T> out = new CompletableFuture<>();
        stream.submit(new DeviceCommand.Fill(new MemRef(1, 0, 64), value, 1), new CommandCallback() {
            @Override
            public void completed(long deviceNanos) {
                try {
                    out.complete(inCallback.call());
                } catch (Exception e) {
                    out.completeExceptionally(e);
                }
            }

            @Override
            public void failed(ArraydException cause) {
                out.completeExceptionally(cause);
            }
        });
        return out;
    }

    private record Seen(int base, int workerDuringKernel, int callbackNice, int workerAfter,
                        boolean hasCompletionThread, boolean onCompletionThread, boolean onWorker) {}

    private static CpuBackend backend(int computeNice) {
        return new CpuBackend(CpuOptions.defaults().withDeviceMemoryBytes(1 << 20).withComputeNice(computeNice));
    }

    /** Runs one {@code hold} launch; reads the worker's nice value while it runs, in its callback and after. */
    private static Seen holdOnce(int computeNice) throws Exception {
        int base = ComputeThreadPriority.currentNice().orElseThrow();
        assumeTrue(base + computeNice <= ComputeThreadPriority.MAX_NICE, "room to lower the test's threads");
        try (CpuBackend backend = backend(computeNice)) {
            CpuDevice cpu = (CpuDevice) backend.openDevices(1).getFirst();
            KernelModule module = backend.compiler().compile(new KernelSource(Dialect.C, HOLD, List.of(
                    new KernelSignature("hold", List.of(KernelParam.buffer("flag", DType.I32, Access.READ_WRITE))))));
            try {
                Kernel hold = module.kernels().getFirst();
                cpu.allocPool(1, 4096, 64);
                MemRef flag = new MemRef(1, 0, 64);
                cpu.memsetZero(flag);
                CpuStream stream = (CpuStream) cpu.newStream("nice-probe");
                try {
                    CompletableFuture<Integer> callbackNice = new CompletableFuture<>();
                    boolean[] on = new boolean[2]; // the completion thread, the stream's worker
                    stream.submit(new DeviceCommand.Launch(hold, new long[] {1}, null, List.of(new KernelArg.Buffer(flag))),
                            new CommandCallback() {
                                @Override
                                public void completed(long deviceNanos) {
                                    on[0] = cpu.completions() != null && cpu.completions().isCurrent();
                                    on[1] = ComputeThreadPriority.currentTid().orElse(-1) == stream.workerTid();
                                    callbackNice.complete(ComputeThreadPriority.currentNice().orElse(-100));
                                }

                                @Override
                                public void failed(ArraydException cause) {
                                    callbackNice.completeExceptionally(cause);
                                }
                            });
                    int during = awaitNice(stream, base + computeNice);
                    cpu.segment(flag, "flag").set(ValueLayout.JAVA_INT, 0, 1); // the kernel returns
                    int inCallback = callbackNice.get(30, TimeUnit.SECONDS);
                    // the worker's nice value after its command: read once it has gone back to its queue
                    int after = ThreadNice.get(stream.workerTid()).orElseThrow();
                    return new Seen(base, during, inCallback, after, cpu.completions() != null, on[0], on[1]);
                } finally {
                    stream.close();
                    cpu.freePool(1);
                }
            } finally {
                module.close();
            }
        }
    }

    /** Polls the worker's nice value (the kernel holds it there until the flag is set) until it is {@code expected}. */
    private static int awaitNice(CpuStream stream, int expected) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        int last = Integer.MIN_VALUE;
        while (System.nanoTime() < deadline) {
            int tid = stream.workerTid();
            if (tid != 0) {
                OptionalInt nice = ThreadNice.get(tid);
                if (nice.isPresent()) {
                    last = nice.getAsInt();
                    if (last == expected) {
                        return last;
                    }
                }
            }
            Thread.onSpinWait();
        }
        return fail("worker's nice value while its kernel runs: " + last + " (expected: " + expected + ")");
    }
}
