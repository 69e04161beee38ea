package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.IrSamples;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import static dev.arrayd.devices.api.conformance.Conformance.await;
import static dev.arrayd.devices.api.conformance.Conformance.run;
import static dev.arrayd.devices.api.conformance.Conformance.submit;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The CUDA backend's fast paths on a real GPU: transfers of many staging chunks split over several
 * copy lanes ({@link ParallelTransfer}), transfers from and to page-locked host memory with no staging
 * ({@link PageLocked}), and commands run on the caller's thread ({@link CudaStream#tryRunInline}). Small staging chunks (64 KiB) make a few MiB span many of them.
 * Skipped, with the reason, without a driver or a GPU.
 */
class CudaFastPathsTest {

    private static final long CHUNK = 64 << 10;

    private CudaBackend backend;
    private CudaDevice device;
    private NativeStream stream;
    private Arena arena;

    @BeforeEach
    void open() {
        backend = new CudaBackend(CudaOptions.defaults().withStaging(CHUNK, 16).withCopyLanes(4));
        Optional<String> reason = backend.unavailableReason();
        Assumptions.assumeTrue(reason.isEmpty(), () -> "cuda backend unavailable: " + reason.orElse(""));
        device = (CudaDevice) backend.openDevices(1).getFirst();
        stream = device.newStream("fast-paths");
        arena = Arena.ofShared();
    }

    @AfterEach
    void close() {
        if (stream != null) {
            stream.close();
        }
        backend.close();
        if (arena != null) {
            arena.close();
        }
    }

    /** Bytes whose every position is distinct enough to catch a chunk landing at the wrong offset. */
    private MemorySegment pattern(long bytes, int seed) {
        MemorySegment s = arena.allocate(bytes, 64);
        for (long i = 0; i < bytes; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + (i >>> 16) * 7 + seed));
        }
        return s;
    }

    private static void assertSameBytes(MemorySegment want, MemorySegment got) {
        long at = want.mismatch(got);
        assertEquals(-1, at, () -> "first differing byte at " + at);
    }

    @Test
    void aTransferOfManyChunksGoesOverLanesAndKeepsEveryByte() {
        long bytes = 37 * CHUNK + 123; // lanes of unequal length and a short last chunk
        assertEquals(4, ParallelTransfer.lanes(new ChunkPlan(bytes, CHUNK), 4, 16));
        device.allocPool(1, bytes + 4096, 256);
        MemRef ref = new MemRef(1, 256, bytes);
        MemorySegment up = pattern(bytes, 5);
        run(stream, new DeviceCommand.Upload(up, ref));
        MemorySegment down = arena.allocate(bytes, 64);
        run(stream, new DeviceCommand.Download(ref, down));
        assertSameBytes(up, down);
    }

    @Test
    void concurrentLargeTransfersOnSeveralStreamsStayApartAndFallBackToSerialWhenStagingIsShort() {
        long bytes = 20 * CHUNK + 7;
        int streams = 4; // 4 lanes take 8 of 16 buffers: the others go serially, or parallel once buffers are free
        List<NativeStream> all = new ArrayList<>();
        List<MemorySegment> sent = new ArrayList<>();
        List<CompletableFuture<Long>> ups = new ArrayList<>();
        for (int s = 0; s < streams; s++) {
            NativeStream st = device.newStream("t" + s);
            all.add(st);
            device.allocPool(10 + s, bytes, 256);
            MemorySegment data = pattern(bytes, 11 * s);
            sent.add(data);
            ups.add(submit(st, new DeviceCommand.Upload(data, new MemRef(10 + s, 0, bytes))));
        }
        ups.forEach(f -> await(f));
        List<MemorySegment> got = new ArrayList<>();
        List<CompletableFuture<Long>> downs = new ArrayList<>();
        for (int s = 0; s < streams; s++) {
            MemorySegment back = arena.allocate(bytes, 64);
            got.add(back);
            downs.add(submit(all.get(s), new DeviceCommand.Download(new MemRef(10 + s, 0, bytes), back)));
        }
        downs.forEach(f -> await(f));
        for (int s = 0; s < streams; s++) {
            assertSameBytes(sent.get(s), got.get(s));
            all.get(s).close();
        }
    }

    @Test
    void aParallelTransferOrdersAfterWhatTheStreamQueuedBeforeIt() {
        long bytes = 16 * CHUNK;
        device.allocPool(1, bytes, 256);
        MemRef ref = new MemRef(1, 0, bytes);
        MemorySegment first = pattern(bytes, 1);
        MemorySegment second = pattern(bytes, 2);
        // queued back to back: the second upload must land after the first, and the download after both
        CompletableFuture<Long> a = submit(stream, new DeviceCommand.Upload(first, ref));
        CompletableFuture<Long> b = submit(stream, new DeviceCommand.Upload(second, ref));
        MemorySegment back = arena.allocate(bytes, 64);
        CompletableFuture<Long> c = submit(stream, new DeviceCommand.Download(ref, back));
        await(a);
        await(b);
        await(c);
        assertSameBytes(second, back);
    }

    @Test
    void pageLockedHostMemoryIsCopiedDirectlyAndStagedAgainOnceUnlocked() {
        long bytes = 5 * CHUNK + 40;
        device.allocPool(1, bytes, 256);
        MemRef ref = new MemRef(1, 0, bytes);
        MemorySegment host = pattern(bytes, 9);
        assertNull(PageLocked.of(host), "ordinary memory is staged");
        Runnable unlock = backend.lockHostMemory(host);
        try {
            assertNotNull(PageLocked.of(host), "registered: one DMA");
            assertNotNull(PageLocked.of(host.asSlice(4096, PageLocked.MIN_BYTES)), "a slice of it too");
            assertNull(PageLocked.of(host.asSlice(0, 100)), "too small to be worth asking");
            run(stream, new DeviceCommand.Upload(host, ref));
            MemorySegment back = arena.allocate(bytes, 64);
            Runnable unlockBack = backend.lockHostMemory(back);
            try {
                run(stream, new DeviceCommand.Download(ref, back));
            } finally {
                unlockBack.run();
            }
            assertSameBytes(host, back);
        } finally {
            unlock.run();
            unlock.run(); // once only
        }
        assertNull(PageLocked.of(host), "unlocked: staged again");
        MemorySegment again = arena.allocate(bytes, 64);
        run(stream, new DeviceCommand.Download(ref, again));
        assertSameBytes(host, again);
        assertNull(PageLocked.of(MemorySegment.ofArray(new byte[(int) bytes])), "heap memory is never page-locked");
    }

    /** Records what an inline run reported, and on which thread. */
    private static final class Seen implements CommandCallback {
        int calls;
        ArraydException failure;
        Thread thread;

        @Override
        public void completed(long deviceNanos) {
            calls++;
            thread = Thread.currentThread();
            assertTrue(deviceNanos >= 0, "device time " + deviceNanos);
        }

        @Override
        public void failed(ArraydException cause) {
            calls++;
            thread = Thread.currentThread();
            failure = cause;
        }
    }

    @Test
    void readyCommandsRunOnTheCallersThreadAndReportBeforeReturning() throws Exception {
        int n = 1000;
        device.allocPool(1, 3 * 4L * n, 256);
        MemRef x = new MemRef(1, 0, 4L * n);
        MemRef y = new MemRef(1, 4L * n, 4L * n);
        MemRef out = new MemRef(1, 8L * n, 4L * n);
        MemorySegment xs = arena.allocate(4L * n, 64);
        for (int i = 0; i < n; i++) {
            xs.setAtIndex(ValueLayout.JAVA_FLOAT, i, i);
        }
        try (KernelModule m = backend.compiler().compile(KernelSource.ir(new IrModule(List.of(IrSamples.vaddGuarded(),
                IrSamples.gatherUnchecked()))))) {
            Seen seen = new Seen();
            assertTrue(stream.tryRunInline(new DeviceCommand.Upload(xs, x), seen));
            assertTrue(stream.tryRunInline(new DeviceCommand.Copy(x, y), seen));
            assertTrue(stream.tryRunInline(new DeviceCommand.Launch(m.kernels().getFirst(), new long[] {n}, null,
                    List.of(new KernelArg.Buffer(x), new KernelArg.Buffer(y), new KernelArg.Buffer(out),
                            KernelArg.Scalar.i64(n), KernelArg.Scalar.i64(n))), seen));
            MemorySegment back = arena.allocate(4L * n, 64);
            assertTrue(stream.tryRunInline(new DeviceCommand.Download(out, back), seen));
            assertEquals(4, seen.calls);
            assertNull(seen.failure, () -> String.valueOf(seen.failure));
            assertEquals(Thread.currentThread(), seen.thread);
            for (int i = 0; i < n; i++) {
                assertEquals(2f * i, back.getAtIndex(ValueLayout.JAVA_FLOAT, i), "out[" + i + "]");
            }

            // a guard that fires inline fails the command through its callback with OUT_OF_RANGE
            MemRef in = new MemRef(1, 0, 40);
            MemRef gathered = new MemRef(1, 4L * n, 40);
            Seen guarded = new Seen();
            assertTrue(stream.tryRunInline(new DeviceCommand.Launch(m.kernels().get(1), new long[] {10}, null,
                    List.of(new KernelArg.Buffer(in), new KernelArg.Buffer(gathered))), guarded));
            assertEquals(1, guarded.calls);
            assertNotNull(guarded.failure);
            assertEquals(ErrorCode.OUT_OF_RANGE, guarded.failure.code(), guarded.failure::toString);
            // and the lane is clean for the next one
            Seen again = new Seen();
            assertTrue(stream.tryRunInline(new DeviceCommand.Fill(out, 0x3f800000L, 4), again));
            assertNull(again.failure, () -> String.valueOf(again.failure));
            run(stream, new DeviceCommand.Download(out, back));
            assertEquals(1f, back.getAtIndex(ValueLayout.JAVA_FLOAT, n - 1));
        }
    }

    @Test
    void whatWouldHoldTheCallerIsDeclinedAndNotRun() {
        long bytes = 3 * CHUNK;
        device.allocPool(1, bytes, 256);
        MemRef ref = new MemRef(1, 0, bytes);
        Seen seen = new Seen();
        assertFalse(stream.tryRunInline(new DeviceCommand.Upload(pattern(bytes, 3), ref), seen), "more than one staging chunk");
        assertFalse(stream.tryRunInline(new DeviceCommand.Sequence(List.of(new DeviceCommand.Fill(ref, 0, 1))), seen),
                "a sequence goes part by part on the worker");
        assertEquals(0, seen.calls);
        stream.close();
        assertFalse(stream.tryRunInline(new DeviceCommand.Fill(ref, 0, 1), seen), "a closing stream");
        stream = null;
    }
}
