package dev.arrayd.devices.api.conformance;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.CompileException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.StreamMarker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The device conformance suite every backend runs (grpc-java's {@code AbstractTransportTest}, IREE's
 * CTS). A backend's test extends it, says how to create the backend and supplies a few canned kernels
 * in its dialect; a backend that reports itself unavailable is skipped with its reason printed.
 *
 * <h2>Canned kernels ({@link #kernelSource(String)})</h2>
 * Each must declare exactly the signature {@link #cannedSignature(String)} returns, and behave so:
 * <ul>
 *   <li>{@code vadd(buffer f32 a READ, buffer f32 b READ, buffer f32 c WRITE, i32 n)}: 1-D;
 *       {@code c[i] = a[i] + b[i]} for global id {@code i < n}.</li>
 *   <li>{@code axpy_f64(f64 a, buffer f64 x READ, buffer f64 y READ_WRITE, i64 n)}: 1-D;
 *       {@code y[i] = a * x[i] + y[i]} for {@code i < n}.</li>
 *   <li>{@code index3d(buffer i64 out WRITE)}: 3-D; for the item with global id (x, y, z) and
 *       {@code lin = (z * gsize(1) + y) * gsize(0) + x}: {@code out[3*lin] = lin},
 *       {@code out[3*lin+1] = lid(0) | lid(1) << 16 | lid(2) << 32},
 *       {@code out[3*lin+2] = group(0) | group(1) << 16 | group(2) << 32}.</li>
 *   <li>{@code scalars(f32 a, f64 b, i32 c, i64 d, u8 e, buffer f32 oa WRITE, buffer f64 ob WRITE,
 *       buffer i32 oc WRITE, buffer i64 od WRITE, buffer u8 oe WRITE)}: work-item 0 stores each
 *       scalar into element 0 of its buffer.</li>
 *   <li>{@code step(buffer i64 acc READ_WRITE, i64 k)}: work-item 0 does
 *       {@code acc[0] = acc[0] * 31 + k} (wrapping): the order of a chain of steps shows in the result.</li>
 *   <li>{@code empty()}: does nothing.</li>
 *   <li>{@code compile_error}: any signature; the source has a compile error on its line 3 and
 *       nowhere else, so its diagnostics must contain {@link #errorLineMarker(int) errorLineMarker(3)}.</li>
 * </ul>
 *
 * <p>After each test the backend is closed and no thread named {@code arrayd-*} started during the
 * test may remain alive (each is joined with a timeout first).
 */
public abstract class AbstractDeviceConformanceTest {

    /** Bounds every wait of the suite; generous because CI machines stall. */
    protected static final long TIMEOUT_SECONDS = 60;

    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    protected Backend backend;
    protected Device device;
    private final List<KernelModule> modules = new ArrayList<>();
    private Set<Thread> threadsBefore;
    private Arena arena;

    /** A new, unopened backend. */
    protected abstract Backend createBackend();

    /** The canned kernel {@code kernel} in the backend's dialect (see the class comment). */
    protected abstract KernelSource kernelSource(String kernel);

    /** How the backend's compiler names line {@code line} of the user's source in diagnostics. */
    protected String errorLineMarker(int line) {
        return ":" + line + ":";
    }

    /** The signature each canned kernel must declare. */
    public static KernelSignature cannedSignature(String kernel) {
        return switch (kernel) {
            case "vadd" -> new KernelSignature("vadd", List.of(
                    KernelParam.buffer("a", DType.F32, Access.READ),
                    KernelParam.buffer("b", DType.F32, Access.READ),
                    KernelParam.buffer("c", DType.F32, Access.WRITE),
                    KernelParam.scalar("n", DType.I32)));
            case "axpy_f64" -> new KernelSignature("axpy_f64", List.of(
                    KernelParam.scalar("a", DType.F64),
                    KernelParam.buffer("x", DType.F64, Access.READ),
                    KernelParam.buffer("y", DType.F64, Access.READ_WRITE),
                    KernelParam.scalar("n", DType.I64)));
            case "index3d" -> new KernelSignature("index3d", List.of(KernelParam.buffer("out", DType.I64, Access.WRITE)));
            case "scalars" -> new KernelSignature("scalars", List.of(
                    KernelParam.scalar("a", DType.F32),
                    KernelParam.scalar("b", DType.F64),
                    KernelParam.scalar("c", DType.I32),
                    KernelParam.scalar("d", DType.I64),
                    KernelParam.scalar("e", DType.U8),
                    KernelParam.buffer("oa", DType.F32, Access.WRITE),
                    KernelParam.buffer("ob", DType.F64, Access.WRITE),
                    KernelParam.buffer("oc", DType.I32, Access.WRITE),
                    KernelParam.buffer("od", DType.I64, Access.WRITE),
                    KernelParam.buffer("oe", DType.U8, Access.WRITE)));
            case "step" -> new KernelSignature("step", List.of(
                    KernelParam.buffer("acc", DType.I64, Access.READ_WRITE),
                    KernelParam.scalar("k", DType.I64)));
            case "empty" -> new KernelSignature("empty", List.of());
            case "compile_error" -> new KernelSignature("compile_error", List.of());
            default -> throw new IllegalArgumentException("canned kernel: " + kernel
                    + " (expected: vadd, axpy_f64, index3d, scalars, step, empty or compile_error)");
        };
    }

    @BeforeEach
    void openBackend(TestInfo test) {
        threadsBefore = Set.copyOf(Thread.getAllStackTraces().keySet());
        backend = createBackend();
        Optional<String> reason = backend.unavailableReason();
        if (reason.isPresent()) {
            System.out.println("[conformance] skipping " + test.getDisplayName() + " on backend " + backend.name()
                    + ": " + reason.get());
            backend.close();
            backend = null;
        }
        Assumptions.assumeTrue(reason.isEmpty(), () -> "backend " + backendName() + " unavailable: " + reason.orElse(""));
        device = backend.openDevices(0).getFirst();
        arena = Arena.ofShared();
    }

    private String backendName() {
        return backend == null ? getClass().getSimpleName() : backend.name();
    }

    @AfterEach
    void closeBackendAndCheckThreads() throws InterruptedException {
        if (backend == null) {
            return;
        }
        for (KernelModule module : modules) {
            module.close();
        }
        modules.clear();
        backend.close();
        arena.close();
        List<Thread> leftovers = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("arrayd-") && !threadsBefore.contains(t)) {
                t.join(TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
                if (t.isAlive()) {
                    leftovers.add(t);
                }
            }
        }
        assertTrue(leftovers.isEmpty(), () -> "threads left alive after close: "
                + leftovers.stream().map(Thread::getName).collect(Collectors.joining(", ")));
    }

    // ---------------------------------------------------------------- helpers

    /** Submits {@code command}; the future completes with the device nanos or fails with the cause. */
    protected static CompletableFuture<Long> submit(NativeStream stream, DeviceCommand command) {
        CompletableFuture<Long> done = new CompletableFuture<>();
        stream.submit(command, into(done));
        return done;
    }

    /** A callback completing {@code done} with the device nanos, or with the failure; a second call fails it. */
    protected static CommandCallback into(CompletableFuture<Long> done) {
        return new CommandCallback() {
            @Override
            public void completed(long deviceNanos) {
                if (!done.complete(deviceNanos)) {
                    done.obtrudeException(new AssertionError("callback called twice"));
                }
            }

            @Override
            public void failed(ArraydException cause) {
                if (!done.completeExceptionally(cause)) {
                    done.obtrudeException(new AssertionError("callback called twice"));
                }
            }
        };
    }

    protected static long await(CompletableFuture<Long> future) {
        try {
            return future.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new AssertionError(e.getCause());
        } catch (TimeoutException e) {
            throw new AssertionError("command did not complete within " + TIMEOUT_SECONDS + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    protected static long run(NativeStream stream, DeviceCommand command) {
        return await(submit(stream, command));
    }

    protected static ArraydException runExpectingFailure(NativeStream stream, DeviceCommand command) {
        return assertThrows(ArraydException.class, () -> run(stream, command));
    }

    protected Kernel kernel(String name) {
        KernelModule module = backend.compiler().compile(kernelSource(name));
        modules.add(module);
        return module.kernels().stream().filter(k -> k.name().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("module has no entry point " + name));
    }

    protected MemorySegment host(long bytes) {
        return arena.allocate(bytes, 64);
    }

    private MemRef slab(int poolId, long bytes) {
        device.allocPool(poolId, bytes, device.info().baseAlignment());
        return new MemRef(poolId, 0, bytes);
    }

    private MemorySegment download(NativeStream stream, MemRef ref) {
        MemorySegment out = host(ref.bytes());
        run(stream, new DeviceCommand.Download(ref, out));
        return out;
    }

    private void upload(NativeStream stream, MemRef ref, MemorySegment data) {
        run(stream, new DeviceCommand.Upload(data, ref));
    }

    private MemorySegment randomBytes(long bytes, long seed) {
        MemorySegment s = host(bytes);
        byte[] b = new byte[(int) bytes];
        new Random(seed).nextBytes(b);
        MemorySegment.copy(b, 0, s, ValueLayout.JAVA_BYTE, 0, b.length);
        return s;
    }

    private static KernelArg buf(MemRef ref) {
        return new KernelArg.Buffer(ref);
    }

    private static DeviceCommand.Launch launch1d(Kernel k, long global, KernelArg... args) {
        return new DeviceCommand.Launch(k, new long[] {global}, null, List.of(args));
    }

    // ---------------------------------------------------------------- info and memory

    @Test
    void deviceInfoIsSane() {
        DeviceInfo info = device.info();
        assertEquals(new DeviceId(backend.name(), 0), device.id());
        assertEquals(device.id(), info.id());
        assertFalse(info.name().isBlank(), "name");
        assertTrue(info.memoryBytes() > 0, () -> "memoryBytes " + info.memoryBytes());
        assertTrue(info.computeUnits() > 0, () -> "computeUnits " + info.computeUnits());
        assertTrue(info.maxWorkGroupSize() > 0, "maxWorkGroupSize");
        assertTrue(info.maxGridDims() >= 1 && info.maxGridDims() <= 3, () -> "maxGridDims " + info.maxGridDims());
        assertTrue(info.maxWorkItemSizes().size() >= info.maxGridDims(), "maxWorkItemSizes per grid dim");
        assertTrue(info.suggestedStreams() >= 1, "suggestedStreams");
        assertTrue(info.dtypes().contains(DType.F32), "dtypes include f32");
        assertTrue(info.dialects().contains(kernelSource("vadd").dialect()), "dialects include the canned kernels' dialect");
        assertTrue(backend.compiler().dialects().contains(kernelSource("vadd").dialect()), "compiler dialects");
    }

    @Test
    void allocAndFreePools() {
        device.allocPool(1, 4096, 64);
        device.allocPool(2, 1 << 20, 4096);
        ArraydException taken = assertThrows(ArraydException.class, () -> device.allocPool(1, 64, 64));
        assertEquals(ErrorCode.ALREADY_EXISTS, taken.code(), taken::toString);
        assertTrue(taken.getMessage().contains("1"), taken::getMessage);
        device.freePool(1);
        device.freePool(1); // unknown ids are ignored
        device.freePool(12345);
        device.allocPool(1, 128, 64);
        NativeStream stream = device.newStream("s");
        MemRef ref = new MemRef(2, 4096, 256);
        MemorySegment data = randomBytes(256, 1);
        upload(stream, ref, data);
        assertEquals(-1, download(stream, ref).mismatch(data));
        device.freePool(2);
        device.freePool(1);
        stream.close();
    }

    @Test
    void allocBeyondCapacityIsResourceExhausted() {
        long capacity = device.info().memoryBytes();
        ArraydException tooBig = assertThrows(ArraydException.class, () -> device.allocPool(1, capacity + 1, 64));
        assertEquals(ErrorCode.RESOURCE_EXHAUSTED, tooBig.code(), tooBig::toString);
        assertTrue(tooBig.getMessage().contains(device.id().toString()), () -> "names the device: " + tooBig.getMessage());
        assertTrue(tooBig.getMessage().contains(Long.toString(capacity + 1)), () -> "names the bytes: " + tooBig.getMessage());

        device.allocPool(2, 1 << 20, 64);
        ArraydException noRoom = assertThrows(ArraydException.class, () -> device.allocPool(3, capacity, 64));
        assertEquals(ErrorCode.RESOURCE_EXHAUSTED, noRoom.code(), noRoom::toString);
        device.freePool(2);
    }

    @Test
    void memsetZeroClearsExactlyTheRange() {
        NativeStream stream = device.newStream("s");
        MemRef all = slab(1, 1024);
        MemorySegment data = randomBytes(1024, 2);
        data.fill((byte) 0x5a);
        upload(stream, all, data);
        device.memsetZero(all.slice(100, 200));
        MemorySegment back = download(stream, all);
        for (int i = 0; i < 1024; i++) {
            byte expected = i >= 100 && i < 300 ? 0 : (byte) 0x5a;
            assertEquals(expected, back.get(ValueLayout.JAVA_BYTE, i), "byte " + i);
        }
        ArraydException outside = assertThrows(ArraydException.class, () -> device.memsetZero(new MemRef(1, 1000, 100)));
        assertTrue(Set.of(ErrorCode.OUT_OF_RANGE, ErrorCode.INVALID_ARGUMENT).contains(outside.code()), outside::toString);
        stream.close();
    }

    @Test
    void uploadDownloadRoundTripAtOffsets() {
        NativeStream stream = device.newStream("s");
        slab(1, 1 << 16);
        long[][] cases = {{0, 1}, {0, 4096}, {64, 1000}, {3, 17}, {4104, 8192}, {(1 << 16) - 8, 8}};
        int seed = 10;
        for (long[] c : cases) {
            MemRef ref = new MemRef(1, c[0], c[1]);
            MemorySegment data = randomBytes(c[1], seed++);
            upload(stream, ref, data);
            assertEquals(-1, download(stream, ref).mismatch(data), () -> "round trip at " + ref);
        }
        ArraydException beyond = runExpectingFailure(stream,
                new DeviceCommand.Upload(host(16), new MemRef(1, (1 << 16) - 8, 16)));
        assertTrue(Set.of(ErrorCode.OUT_OF_RANGE, ErrorCode.INVALID_ARGUMENT).contains(beyond.code()), beyond::toString);
        stream.close();
    }

    @Test
    void copyWithinAndBetweenSlabs() {
        NativeStream stream = device.newStream("s");
        slab(1, 8192);
        slab(2, 8192);
        MemorySegment data = randomBytes(3000, 3);
        upload(stream, new MemRef(1, 0, 3000), data);
        run(stream, new DeviceCommand.Copy(new MemRef(1, 0, 3000), new MemRef(2, 128, 3000)));
        run(stream, new DeviceCommand.Copy(new MemRef(2, 128, 3000), new MemRef(1, 4096, 3000)));
        assertEquals(-1, download(stream, new MemRef(2, 128, 3000)).mismatch(data));
        assertEquals(-1, download(stream, new MemRef(1, 4096, 3000)).mismatch(data));
        stream.close();
    }

    @Test
    void fillWithEveryPatternWidth() {
        NativeStream stream = device.newStream("s");
        MemRef all = slab(1, 4096);
        long pattern = 0x0807060504030201L;
        for (int width : new int[] {1, 2, 4, 8}) {
            device.memsetZero(all);
            MemRef target = new MemRef(1, 64, 1000);
            run(stream, new DeviceCommand.Fill(target, pattern, width));
            MemorySegment back = download(stream, all);
            for (long i = 0; i < 4096; i++) {
                boolean inside = i >= target.offset() && i < target.offset() + target.bytes();
                byte expected = inside ? (byte) (1 + (i - target.offset()) % width) : 0;
                assertEquals(expected, back.get(ValueLayout.JAVA_BYTE, i), "width " + width + ", byte " + i);
            }
        }
        stream.close();
    }

    // ---------------------------------------------------------------- kernels

    @Test
    void vaddSmall() {
        vadd(1000, 1024);
    }

    @Test
    void vaddLargeEnoughToSplit() {
        vadd(1 << 20, 1 << 20);
    }

    private void vadd(int n, long global) {
        Kernel k = kernel("vadd");
        NativeStream stream = device.newStream("s");
        long bytes = (long) n * 4;
        MemRef a = slab(1, bytes);
        MemRef b = slab(2, bytes);
        MemRef c = slab(3, bytes + 4096); // the tail past n must stay untouched
        MemorySegment ha = host(bytes);
        MemorySegment hb = host(bytes);
        for (int i = 0; i < n; i++) {
            ha.setAtIndex(F32, i, i * 0.5f);
            hb.setAtIndex(F32, i, 1000f - i);
        }
        upload(stream, a, ha);
        upload(stream, b, hb);
        run(stream, new DeviceCommand.Fill(c, Float.floatToRawIntBits(-7f), 4));
        long nanos = run(stream, launch1d(k, global, buf(a), buf(b), buf(c), KernelArg.Scalar.i32(n)));
        assertTrue(nanos >= 0, "device nanos");
        MemorySegment hc = download(stream, c);
        for (int i = 0; i < n; i++) {
            assertEquals(i * 0.5f + (1000f - i), hc.getAtIndex(F32, i), "c[" + i + "]");
        }
        for (long i = n; i < (bytes + 4096) / 4; i++) {
            assertEquals(-7f, hc.getAtIndex(F32, i), "c[" + i + "] past n");
        }
        stream.close();
    }

    /** The inline path either declines or runs the command and calls back before returning. */
    @Test
    void tryRunInlineRunsBeforeReturningOrDeclines() {
        Kernel k = kernel("vadd");
        NativeStream stream = device.newStream("inline");
        int n = 256;
        MemRef a = slab(1, 4L * n);
        MemRef b = slab(2, 4L * n);
        MemRef c = slab(3, 4L * n);
        MemorySegment ha = host(4L * n);
        for (int i = 0; i < n; i++) {
            ha.setAtIndex(F32, i, i);
        }
        upload(stream, a, ha);
        upload(stream, b, ha);
        long[] called = {0};
        ArraydException[] failure = {null};
        CommandCallback cb = new CommandCallback() {
            @Override
            public void completed(long deviceNanos) {
                called[0]++;
            }

            @Override
            public void failed(ArraydException cause) {
                called[0]++;
                failure[0] = cause;
            }
        };
        boolean ran = stream.tryRunInline(launch1d(k, n, buf(a), buf(b), buf(c), KernelArg.Scalar.i32(n)), cb);
        if (ran) {
            assertEquals(1, called[0], "callback ran exactly once, before tryRunInline returned");
            assertEquals(null, failure[0]);
            MemorySegment hc = download(stream, c);
            for (int i = 0; i < n; i++) {
                assertEquals(2f * i, hc.getAtIndex(F32, i), "c[" + i + "]");
            }
            // a bad command run inline fails through its callback, not by throwing
            assertTrue(stream.tryRunInline(launch1d(k, n, buf(a)), cb));
            assertEquals(2, called[0]);
            assertEquals(ErrorCode.INVALID_ARGUMENT, failure[0].code());
        } else {
            assertEquals(0, called[0], "a declined command is not run");
        }
        stream.close();
    }

    @Test
    void axpyF64() {
        Kernel k = kernel("axpy_f64");
        NativeStream stream = device.newStream("s");
        int n = 5000;
        MemRef x = slab(1, n * 8L);
        MemRef y = slab(2, n * 8L);
        MemorySegment hx = host(n * 8L);
        MemorySegment hy = host(n * 8L);
        for (int i = 0; i < n; i++) {
            hx.setAtIndex(ValueLayout.JAVA_DOUBLE, i, i);
            hy.setAtIndex(ValueLayout.JAVA_DOUBLE, i, 1.0 / (i + 1));
        }
        upload(stream, x, hx);
        upload(stream, y, hy);
        run(stream, launch1d(k, n, KernelArg.Scalar.f64(2.5), buf(x), buf(y), KernelArg.Scalar.i64(n)));
        MemorySegment back = download(stream, y);
        for (int i = 0; i < n; i++) {
            assertEquals(2.5 * i + 1.0 / (i + 1), back.getAtIndex(ValueLayout.JAVA_DOUBLE, i), "y[" + i + "]");
        }
        stream.close();
    }

    @Test
    void grid3dWithLocalDims() {
        Kernel k = kernel("index3d");
        NativeStream stream = device.newStream("s");
        long[][][] cases = {
                {{8, 6, 4}, {4, 3, 2}},
                {{64, 32, 16}, {8, 4, 2}}, // 32768 items: large enough to be split where backends split
                {{5, 7, 3}, null},
        };
        for (long[][] c : cases) {
            long[] g = c[0];
            long[] l = c[1];
            long items = g[0] * g[1] * g[2];
            MemRef out = slab(1, items * 3 * 8);
            run(stream, new DeviceCommand.Launch(k, g, l, List.of(buf(out))));
            MemorySegment back = download(stream, out);
            for (long z = 0; z < g[2]; z++) {
                for (long y = 0; y < g[1]; y++) {
                    for (long x = 0; x < g[0]; x++) {
                        long lin = (z * g[1] + y) * g[0] + x;
                        assertEquals(lin, back.getAtIndex(I64, 3 * lin), "lin at " + x + "," + y + "," + z);
                        if (l != null) {
                            long lid = x % l[0] | (y % l[1]) << 16 | (z % l[2]) << 32;
                            long grp = x / l[0] | (y / l[1]) << 16 | (z / l[2]) << 32;
                            assertEquals(lid, back.getAtIndex(I64, 3 * lin + 1), "local id at " + x + "," + y + "," + z);
                            assertEquals(grp, back.getAtIndex(I64, 3 * lin + 2), "group id at " + x + "," + y + "," + z);
                        }
                    }
                }
            }
            device.freePool(1);
        }
        stream.close();
    }

    @Test
    void scalarArgsOfEveryComputableDtype() {
        Kernel k = kernel("scalars");
        NativeStream stream = device.newStream("s");
        slab(1, 5 * 64);
        MemRef oa = new MemRef(1, 0, 4);
        MemRef ob = new MemRef(1, 64, 8);
        MemRef oc = new MemRef(1, 128, 4);
        MemRef od = new MemRef(1, 192, 8);
        MemRef oe = new MemRef(1, 256, 1);
        float a = 1.5e-3f;
        double b = -2.25e300;
        int c = -123_456_789;
        long d = 0x8123_4567_89ab_cdefL;
        int e = 200;
        run(stream, launch1d(k, 1, KernelArg.Scalar.f32(a), KernelArg.Scalar.f64(b), KernelArg.Scalar.i32(c),
                KernelArg.Scalar.i64(d), KernelArg.Scalar.u8(e), buf(oa), buf(ob), buf(oc), buf(od), buf(oe)));
        MemorySegment back = download(stream, new MemRef(1, 0, 5 * 64));
        assertEquals(a, back.get(F32, 0));
        assertEquals(b, back.get(ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 64));
        assertEquals(c, back.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 128));
        assertEquals(d, back.get(I64, 192));
        assertEquals(e, Byte.toUnsignedInt(back.get(ValueLayout.JAVA_BYTE, 256)));
        stream.close();
    }

    @Test
    void emptyKernelRoundTrips() {
        Kernel k = kernel("empty");
        NativeStream stream = device.newStream("s");
        for (int i = 0; i < 100; i++) {
            run(stream, launch1d(k, 1));
        }
        assertTrue(stream.isIdle());
        stream.close();
    }

    // ---------------------------------------------------------------- streams

    @Test
    void thousandCommandsRunInOrder() throws InterruptedException {
        Kernel step = kernel("step");
        NativeStream stream = device.newStream("s");
        MemRef acc = slab(1, 8);
        device.memsetZero(acc);
        int count = 1000;
        CountDownLatch all = new CountDownLatch(count);
        AtomicInteger completedInOrder = new AtomicInteger();
        AtomicReference<Throwable> problem = new AtomicReference<>();
        long expected = 0;
        for (int i = 0; i < count; i++) {
            int index = i;
            expected = expected * 31 + i;
            stream.submit(launch1d(step, 1, buf(acc), KernelArg.Scalar.i64(i)), new CommandCallback() {
                @Override
                public void completed(long deviceNanos) {
                    if (!completedInOrder.compareAndSet(index, index + 1)) {
                        problem.compareAndSet(null, new AssertionError("command " + index + " completed out of order"));
                    }
                    all.countDown();
                }

                @Override
                public void failed(ArraydException cause) {
                    problem.compareAndSet(null, cause);
                    all.countDown();
                }
            });
        }
        assertTrue(all.await(TIMEOUT_SECONDS, TimeUnit.SECONDS), "1000 callbacks");
        if (problem.get() != null) {
            fail(problem.get());
        }
        assertTrue(stream.isIdle(), "idle after every callback");
        assertEquals(expected, download(stream, acc).get(I64, 0));
        assertTrue(stream.isIdle(), "idle again");
        stream.close();
    }

    @Test
    void twoStreamsAtOnce() throws Exception {
        Kernel step = kernel("step");
        NativeStream s1 = device.newStream("one");
        NativeStream s2 = device.newStream("two");
        MemRef acc1 = slab(1, 8);
        MemRef acc2 = slab(2, 8);
        device.memsetZero(acc1);
        device.memsetZero(acc2);
        int count = 500;
        List<CompletableFuture<Long>> futures = new ArrayList<>();
        long e1 = 0;
        long e2 = 0;
        for (int i = 0; i < count; i++) {
            futures.add(submit(s1, launch1d(step, 1, buf(acc1), KernelArg.Scalar.i64(i))));
            futures.add(submit(s2, launch1d(step, 1, buf(acc2), KernelArg.Scalar.i64(-i))));
            e1 = e1 * 31 + i;
            e2 = e2 * 31 - i;
        }
        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        assertEquals(e1, download(s1, acc1).get(I64, 0));
        assertEquals(e2, download(s2, acc2).get(I64, 0));
        s1.close();
        s2.close();
    }

    @Test
    void badLaunchArgsAreInvalidArgumentAndTheStreamKeepsWorking() {
        Kernel vadd = kernel("vadd");
        NativeStream stream = device.newStream("s");
        MemRef a = slab(1, 4096);
        MemRef b = slab(2, 4096);
        MemRef c = slab(3, 4096);
        KernelArg n = KernelArg.Scalar.i32(1024);
        Map<String, DeviceCommand.Launch> bad = new java.util.LinkedHashMap<>();
        bad.put("too few args", launch1d(vadd, 1024, buf(a), buf(b), buf(c)));
        bad.put("too many args", launch1d(vadd, 1024, buf(a), buf(b), buf(c), n, n));
        bad.put("scalar for a buffer", launch1d(vadd, 1024, buf(a), buf(b), KernelArg.Scalar.f64(1), n));
        bad.put("buffer for a scalar", launch1d(vadd, 1024, buf(a), buf(b), buf(c), buf(a)));
        bad.put("wrong scalar dtype", launch1d(vadd, 1024, buf(a), buf(b), buf(c), KernelArg.Scalar.i64(1024)));
        bad.put("unknown pool", launch1d(vadd, 1024, buf(a), buf(new MemRef(99, 0, 64)), buf(c), n));
        bad.put("zero dim", launch1d(vadd, 0, buf(a), buf(b), buf(c), n));
        bad.put("four dims", new DeviceCommand.Launch(vadd, new long[] {1, 1, 1, 1}, null, List.of(buf(a), buf(b), buf(c), n)));
        bad.put("local not dividing", new DeviceCommand.Launch(vadd, new long[] {1000}, new long[] {64}, List.of(buf(a), buf(b), buf(c), n)));
        bad.put("local dims count", new DeviceCommand.Launch(vadd, new long[] {1024}, new long[] {4, 4}, List.of(buf(a), buf(b), buf(c), n)));
        for (Map.Entry<String, DeviceCommand.Launch> e : bad.entrySet()) {
            ArraydException error = runExpectingFailure(stream, e.getValue());
            assertEquals(ErrorCode.INVALID_ARGUMENT, error.code(), () -> e.getKey() + ": " + error);
        }
        ArraydException wrongType = runExpectingFailure(stream, bad.get("scalar for a buffer"));
        assertTrue(wrongType.getMessage().contains("args[2]"), wrongType::getMessage);
        assertTrue(wrongType.getMessage().contains("c"), wrongType::getMessage);
        ArraydException outside = runExpectingFailure(stream,
                launch1d(vadd, 1024, buf(a), buf(b), buf(new MemRef(3, 4000, 4096)), n));
        assertTrue(Set.of(ErrorCode.OUT_OF_RANGE, ErrorCode.INVALID_ARGUMENT).contains(outside.code()), outside::toString);
        assertTrue(outside.getMessage().contains("args[2]"), outside::getMessage);

        MemorySegment ones = host(4096);
        for (int i = 0; i < 1024; i++) {
            ones.setAtIndex(F32, i, 1f);
        }
        upload(stream, a, ones);
        upload(stream, b, ones);
        run(stream, launch1d(vadd, 1024, buf(a), buf(b), buf(c), n));
        MemorySegment back = download(stream, c);
        for (int i = 0; i < 1024; i++) {
            assertEquals(2f, back.getAtIndex(F32, i), "c[" + i + "]");
        }
        assertTrue(stream.isIdle());
        stream.close();
    }

    // ---------------------------------------------------------------- markers (native waits between streams)

    /**
     * A command submitted after another stream's marker starts only once everything before the marker
     * finished: the marking stream is kept busy with 16 fills of 8 MiB, then marked, and the waiting
     * stream, idle, copies the tail of that buffer. Without the wait the copy would run at once and see
     * an earlier fill's bytes. Backends without markers must answer {@code mark()} with null.
     */
    @Test
    void aMarkOrdersACommandOfAnotherStreamAfterEverythingBeforeIt() {
        NativeStream marking = device.newStream("marking");
        NativeStream waiting = device.newStream("waiting");
        long bytes = 8L << 20;
        MemRef big = slab(1, bytes);
        MemRef out = slab(2, 4096);
        List<CompletableFuture<Long>> fills = new ArrayList<>();
        for (int i = 1; i <= 16; i++) {
            fills.add(submit(marking, new DeviceCommand.Fill(big, i, 1)));
        }
        StreamMarker marker = marking.mark();
        StreamMarker foreign = () -> true;
        assertFalse(waiting.canWaitFor(foreign), "a marker the backend did not make");
        if (marker == null) {
            System.out.println("[conformance] " + backendName() + ": no native markers; streams are ordered by the host");
        } else {
            assertTrue(waiting.canWaitFor(marker), "a marker of a sibling stream of the same device");
            CompletableFuture<Long> copied = new CompletableFuture<>();
            waiting.submitAfter(new StreamMarker[] {marker}, new DeviceCommand.Copy(new MemRef(1, bytes - 4096, 4096), out),
                    into(copied));
            await(copied);
            assertTrue(marker.isReached(), "the waiting command ran after the marked point was reached");
            MemorySegment back = download(waiting, out);
            for (long i = 0; i < 4096; i++) {
                assertEquals((byte) 16, back.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " of the tail copied after the last fill");
            }
            StreamMarker afterCopy = waiting.mark();
            CompletableFuture<Long> refill = new CompletableFuture<>();
            marking.submitAfter(new StreamMarker[] {afterCopy}, new DeviceCommand.Fill(out, 1, 1), into(refill));
            await(refill);
            assertTrue(afterCopy.isReached(), "the waiting stream's own marker is reached once its commands are done");
        }
        fills.forEach(AbstractDeviceConformanceTest::await);
        StreamMarker idle = marking.mark();
        if (idle != null) {
            // an idle stream's marker is reached without anything else being submitted
            CompletableFuture<Long> after = new CompletableFuture<>();
            waiting.submitAfter(new StreamMarker[] {idle}, new DeviceCommand.Fill(out, 1, 1), into(after));
            await(after);
            assertTrue(idle.isReached());
        }
        marking.close();
        waiting.close();
    }

    /** A closing stream may still run its last commands: it gives no marker, and the caller orders on the host. */
    @Test
    void aClosedStreamGivesNoMarker() {
        NativeStream closed = device.newStream("closed");
        MemRef ref = slab(1, 64);
        closed.close();
        CompletableFuture<Long> refused = new CompletableFuture<>();
        closed.submit(new DeviceCommand.Fill(ref, 1, 1), into(refused));
        ArraydException e = assertThrows(ArraydException.class, () -> await(refused));
        assertEquals(ErrorCode.FAILED_PRECONDITION, e.code(), e::toString);
        assertEquals(null, closed.mark(), "no marker from a closed stream");
    }

    @Test
    void compileErrorNamesTheUsersLine() {
        KernelSource source = kernelSource("compile_error");
        CompileException error = assertThrows(CompileException.class, () -> backend.compiler().compile(source));
        assertEquals(ErrorCode.INVALID_ARGUMENT, error.code());
        assertTrue(error.diagnostics().contains(errorLineMarker(3)),
                () -> "diagnostics mention line 3 as " + errorLineMarker(3) + ":\n" + error.diagnostics());
    }

    @Test
    void closeDrainsQueuedWorkAndEndsTheStream() throws InterruptedException {
        NativeStream stream = device.newStream("s");
        MemRef ref = slab(1, 64);
        int count = 200;
        CountDownLatch done = new CountDownLatch(count);
        AtomicInteger failures = new AtomicInteger();
        for (int i = 0; i < count; i++) {
            stream.submit(new DeviceCommand.Fill(ref, i, 1), new CommandCallback() {
                @Override
                public void completed(long deviceNanos) {
                    done.countDown();
                }

                @Override
                public void failed(ArraydException cause) {
                    failures.incrementAndGet();
                    done.countDown();
                }
            });
        }
        stream.close();
        assertTrue(done.await(TIMEOUT_SECONDS, TimeUnit.SECONDS), "every queued command called back by close");
        assertEquals(0, failures.get());
        assertTrue(stream.isIdle());
        ArraydException afterClose = assertThrows(ArraydException.class, () -> run(stream, new DeviceCommand.Fill(ref, 0, 1)));
        assertEquals(ErrorCode.FAILED_PRECONDITION, afterClose.code(), afterClose::toString);
        MemorySegment back = host(64);
        NativeStream other = device.newStream("t");
        run(other, new DeviceCommand.Download(ref, back));
        assertEquals((byte) (count - 1), back.get(ValueLayout.JAVA_BYTE, 0));
        other.close();
    }

    @Test
    void deviceCloseEndsItsStreams() {
        NativeStream s1 = device.newStream("one");
        NativeStream s2 = device.newStream("two");
        MemRef ref = slab(1, 64);
        run(s1, new DeviceCommand.Fill(ref, 1, 1));
        run(s2, new DeviceCommand.Fill(ref, 2, 1));
        device.close(); // the after-each check proves both stream threads are gone
        assertTrue(s1.isIdle() && s2.isIdle());
    }
}
