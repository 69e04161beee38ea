package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.testing.ResourcesPerClass;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.IrInterpreter;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.IrSamples;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import static dev.arrayd.devices.api.conformance.Conformance.await;
import static dev.arrayd.devices.api.conformance.Conformance.run;
import static dev.arrayd.devices.api.conformance.Conformance.submit;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * IR kernels on a real GPU: results equal to the interpreter's, the guard words (OUT_OF_RANGE naming the
 * kernel, the buffer and the index; nothing outside the buffers touched), guard slots reused across many
 * launches in flight, launch checks. Skipped, with the reason, without a driver, a GPU or NVRTC.
 */
@ResourcesPerClass("one CUDA backend and its compiled kernels serve every test")
class CudaIrTest {

    private static final long SLAB = 64L << 20;

    private static CudaBackend backend;
    private static NativeStream stream;
    private static KernelModule module;
    private static List<Kernel> kernels;
    private static Arena arena;
    private static long next;

    private static String skipReason; // null when the GPU tests can run

    @BeforeAll
    static void open() {
        backend = new CudaBackend();
        Optional<String> reason = backend.unavailableReason();
        if (reason.isPresent()) {
            skipReason = "cuda backend unavailable: " + reason.get();
            return;
        }
        Optional<String> nvrtc = backend.nvrtcProblem();
        if (nvrtc.isPresent()) {
            skipReason = "IR kernels need NVRTC: " + nvrtc.get();
            return;
        }
        CudaDevice device = (CudaDevice) backend.openDevices(1).getFirst();
        device.allocPool(1, SLAB, device.info().baseAlignment());
        stream = device.newStream("ir-test");
        arena = Arena.ofShared();
        module = backend.compiler().compile(KernelSource.ir(new IrModule(List.of(IrSamples.saxpy(), IrSamples.gatherUnchecked(),
                IrSamples.matmul(), IrSamples.groupSum()))));
        kernels = module.kernels();
    }

    /** Every test is reported skipped, with the reason, where there is no GPU to run it on. */
    @BeforeEach
    void needsAGpu() {
        Assumptions.assumeTrue(skipReason == null, () -> skipReason);
    }

    @AfterAll
    static void close() {
        if (module != null) {
            module.close();
        }
        if (stream != null) {
            stream.close();
        }
        if (backend != null) {
            backend.close();
        }
        if (arena != null) {
            arena.close();
        }
    }

    private static Kernel kernel(String name) {
        return kernels.stream().filter(k -> k.name().equals(name)).findFirst().orElseThrow();
    }

    private static CheckedKernel checked(Kernel k) {
        return ((CudaKernel) k).ir();
    }

    /** A fresh device buffer of {@code bytes}, filled with {@code fill}, with a 256-byte gap after it. */
    private static MemRef alloc(long bytes, byte fill) {
        MemRef ref = new MemRef(1, next, bytes);
        next += (bytes + 255) / 256 * 256 + 256;
        if (next > SLAB) {
            throw new IllegalStateException("test slab exhausted");
        }
        run(stream, new DeviceCommand.Fill(ref, fill & 0xff, 1));
        return ref;
    }

    private static void upload(MemRef ref, MemorySegment data) {
        run(stream, new DeviceCommand.Upload(data, ref));
    }

    private static MemorySegment download(MemRef ref) {
        MemorySegment out = arena.allocate(ref.bytes(), 64);
        run(stream, new DeviceCommand.Download(ref, out));
        return out;
    }

    private static MemorySegment floats(int n, java.util.function.IntToDoubleFunction f) {
        MemorySegment s = arena.allocate(4L * n, 64);
        for (int i = 0; i < n; i++) {
            s.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) f.applyAsDouble(i));
        }
        return s;
    }

    @Test
    void saxpyMatchesTheInterpreterBitForBit() {
        int n = 100_000;
        MemorySegment xs = floats(n, i -> i * 0.5);
        MemorySegment ys = floats(n, i -> 1000 - i * 0.37);
        MemRef x = alloc(4L * n, (byte) 0);
        MemRef y = alloc(4L * n, (byte) 0);
        upload(x, xs);
        upload(y, ys);
        List<KernelArg> args = List.of(KernelArg.Scalar.f32(3.1f), new KernelArg.Buffer(x), new KernelArg.Buffer(y),
                KernelArg.Scalar.i64(n));
        run(stream, new DeviceCommand.Launch(kernel("saxpy"), new long[] {n + 7}, null, args));
        MemorySegment want = MemorySegment.ofArray(ys.toArray(ValueLayout.JAVA_FLOAT));
        IrInterpreter.run(checked(kernel("saxpy")), new long[] {n + 7}, null,
                List.of(KernelArg.Scalar.f32(3.1f), MemorySegment.ofArray(xs.toArray(ValueLayout.JAVA_FLOAT)), want,
                        KernelArg.Scalar.i64(n)));
        assertArrayEquals(want.toArray(ValueLayout.JAVA_FLOAT), download(y).toArray(ValueLayout.JAVA_FLOAT),
                "no fused multiply-add: every operation rounds as in the interpreter");
    }

    @Test
    void matmulAndAGroupReductionAreRight() {
        int m = 37, k = 19, n = 23;
        MemRef a = alloc(4L * m * k, (byte) 0);
        MemRef b = alloc(4L * k * n, (byte) 0);
        MemRef c = alloc(4L * m * n, (byte) 0);
        upload(a, floats(m * k, i -> i % 5 - 2));
        upload(b, floats(k * n, i -> i % 3 + 1));
        run(stream, new DeviceCommand.Launch(kernel("matmul"), new long[] {n + 1, m + 2}, null, List.of(new KernelArg.Buffer(a),
                new KernelArg.Buffer(b), new KernelArg.Buffer(c), KernelArg.Scalar.i32(m), KernelArg.Scalar.i32(n),
                KernelArg.Scalar.i32(k))));
        float[] got = download(c).toArray(ValueLayout.JAVA_FLOAT);
        for (int r = 0; r < m; r++) {
            for (int col = 0; col < n; col++) {
                float want = 0;
                for (int kk = 0; kk < k; kk++) {
                    want += (float) ((r * k + kk) % 5 - 2) * ((kk * n + col) % 3 + 1);
                }
                assertEquals(want, got[r * n + col], "c[" + r + "][" + col + "]");
            }
        }

        int groups = 64;
        MemorySegment xs = floats(256 * groups, i -> (i % 17) * 0.25 - 1);
        MemRef x = alloc(4L * 256 * groups, (byte) 0);
        MemRef partial = alloc(4L * groups, (byte) 0);
        upload(x, xs);
        run(stream, new DeviceCommand.Launch(kernel("group_sum"), new long[] {256L * groups}, null,
                List.of(new KernelArg.Buffer(x), new KernelArg.Buffer(partial))));
        MemorySegment want = MemorySegment.ofArray(new float[groups]);
        IrInterpreter.run(checked(kernel("group_sum")), new long[] {256L * groups}, null,
                List.of(MemorySegment.ofArray(xs.toArray(ValueLayout.JAVA_FLOAT)), want));
        assertArrayEquals(want.toArray(ValueLayout.JAVA_FLOAT), download(partial).toArray(ValueLayout.JAVA_FLOAT));
    }

    @Test
    void anOutOfBoundsIndexIsOutOfRangeAndTouchesNothingElse() {
        MemRef in = alloc(4 * 10, (byte) 0);
        MemRef out = alloc(4 * 10, (byte) 0);
        MemRef neighbour = alloc(4 * 64, (byte) 0x5a);
        MemorySegment ins = arena.allocate(40, 64);
        for (int i = 0; i < 10; i++) {
            ins.setAtIndex(ValueLayout.JAVA_INT, i, 100 + i);
        }
        upload(in, ins);
        ArraydException e = assertThrows(ArraydException.class, () -> run(stream, new DeviceCommand.Launch(kernel("gather"),
                new long[] {40}, null, List.of(new KernelArg.Buffer(in), new KernelArg.Buffer(out)))));
        assertEquals(ErrorCode.OUT_OF_RANGE, e.code(), e::toString);
        assertTrue(e.getMessage().startsWith("kernel gather: index ")
                && e.getMessage().matches(".*index \\d+ of buffer (in \\(args\\[0\\]|out \\(args\\[1\\]), 10 elements\\).*"),
                e::getMessage);
        assertArrayEquals(new int[] {100, 102, 104, 106, 108, 0, 0, 0, 0, 0}, download(out).toArray(ValueLayout.JAVA_INT));
        for (byte v : download(neighbour).toArray(ValueLayout.JAVA_BYTE)) {
            assertEquals(0x5a, v);
        }
        // the guard words are the stream's, zeroed per launch: the next launch is clean
        run(stream, new DeviceCommand.Launch(kernel("gather"), new long[] {5}, null,
                List.of(new KernelArg.Buffer(in), new KernelArg.Buffer(out))));
    }

    @Test
    void everyLaunchInFlightHasItsOwnGuardWords() {
        MemRef in = alloc(4 * 10, (byte) 1);
        MemRef out = alloc(4 * 10, (byte) 0);
        List<CompletableFuture<Long>> launches = new ArrayList<>();
        int count = 3 * GuardSlots.SLOTS + 5; // the slots come round three times, with launches still in flight
        for (int i = 0; i < count; i++) {
            long items = i % 3 == 0 ? 40 : 5; // every third one reads past `in`
            launches.add(submit(stream, new DeviceCommand.Launch(kernel("gather"), new long[] {items}, null,
                    List.of(new KernelArg.Buffer(in), new KernelArg.Buffer(out)))));
        }
        for (int i = 0; i < count; i++) {
            int index = i;
            if (i % 3 == 0) {
                CompletionException failed = assertThrows(CompletionException.class, () -> launches.get(index).join());
                ArraydException cause = (ArraydException) failed.getCause();
                assertEquals(ErrorCode.OUT_OF_RANGE, cause.code(), "launch " + i);
            } else {
                await(launches.get(i));
            }
        }
    }

    @Test
    void launchesAreCheckedAgainstWhatTheKernelDeclares() {
        MemRef x = alloc(4 * 10, (byte) 0);
        MemRef y = alloc(4 * 10, (byte) 0);
        ArraydException small = assertThrows(ArraydException.class, () -> run(stream, new DeviceCommand.Launch(kernel("saxpy"),
                new long[] {16}, null, List.of(KernelArg.Scalar.f32(1), new KernelArg.Buffer(x), new KernelArg.Buffer(y),
                        KernelArg.Scalar.i64(11)))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, small.code());
        assertTrue(small.getMessage().contains("args[1]: buffer of 10 elements for x (expected: at least 11"), small::getMessage);
        ArraydException local = assertThrows(ArraydException.class, () -> run(stream, new DeviceCommand.Launch(
                kernel("group_sum"), new long[] {512}, new long[] {128}, List.of(new KernelArg.Buffer(x), new KernelArg.Buffer(y)))));
        assertTrue(local.getMessage().startsWith("localDims: [128]"), local::getMessage);
    }
}
