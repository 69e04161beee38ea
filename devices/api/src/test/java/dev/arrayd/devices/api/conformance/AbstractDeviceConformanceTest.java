package dev.arrayd.devices.api.conformance;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

import static dev.arrayd.devices.api.conformance.Conformance.TIMEOUT_SECONDS;
import static dev.arrayd.devices.api.conformance.Conformance.run;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The device conformance suite every backend runs (grpc-java's {@code AbstractTransportTest}, IREE's
 * CTS), one concept per interface: {@link MemoryConformance}, {@link TransferConformance},
 * {@link KernelConformance}, {@link StreamConformance}, {@link MarkerConformance}. A backend's test extends
 * this class, says how to create the backend and supplies a few canned kernels in its dialect. A backend
 * that reports itself unavailable is skipped with its reason printed; a backend lists what it does not
 * support, and why, in {@link #unsupported()} (those tests are skipped with that reason printed).
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
public abstract class AbstractDeviceConformanceTest implements ConformanceFixture, MemoryConformance,
        TransferConformance, KernelConformance, StreamConformance, MarkerConformance {

    private Backend backend;
    private Device device;
    private final List<KernelModule> modules = new ArrayList<>();
    private Set<Thread> threadsBefore;
    private Arena arena;

    /** A new, unopened backend. */
    protected abstract Backend createBackend();

    /** The canned kernel {@code kernel} in the backend's dialect (see the class comment). */
    @Override
    public abstract KernelSource kernelSource(String kernel);

    /** How the backend's compiler names line {@code line} of the user's source in diagnostics. */
    @Override
    public String errorLineMarker(int line) {
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

    /**
     * What this backend does not support, and why: concept interfaces (e.g. {@code KernelConformance}) or test
     * methods by simple name. Their tests are skipped, with the reason printed.
     */
    protected Map<String, String> unsupported() {
        return Map.of();
    }

    @Override
    public Backend backend() {
        return backend;
    }

    @Override
    public Device device() {
        return device;
    }

    @BeforeEach
    void openBackend(TestInfo test) {
        String method = test.getTestMethod().map(java.lang.reflect.Method::getName).orElse("");
        String concept = test.getTestMethod().map(m -> m.getDeclaringClass().getSimpleName()).orElse("");
        String why = unsupported().getOrDefault(method, unsupported().get(concept));
        if (why != null) {
            System.out.println("[conformance] skipping " + concept + "." + method + " on " + getClass().getSimpleName()
                    + ": not supported: " + why);
        }
        Assumptions.assumeTrue(why == null, () -> concept + "." + method + " not supported: " + why);
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

    @Override
    public String backendName() {
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

    @Override
    public Kernel kernel(String name) {
        KernelModule module = backend.compiler().compile(kernelSource(name));
        modules.add(module);
        return module.kernels().stream().filter(k -> k.name().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("module has no entry point " + name));
    }

    @Override
    public MemorySegment host(long bytes) {
        return arena.allocate(bytes, 64);
    }

    @Override
    public MemRef slab(int poolId, long bytes) {
        device.allocPool(poolId, bytes, device.info().baseAlignment());
        return new MemRef(poolId, 0, bytes);
    }

    @Override
    public MemorySegment download(NativeStream stream, MemRef ref) {
        MemorySegment out = host(ref.bytes());
        run(stream, new DeviceCommand.Download(ref, out));
        return out;
    }

    @Override
    public void upload(NativeStream stream, MemRef ref, MemorySegment data) {
        run(stream, new DeviceCommand.Upload(data, ref));
    }

    @Override
    public MemorySegment randomBytes(long bytes, long seed) {
        MemorySegment s = host(bytes);
        byte[] b = new byte[(int) bytes];
        new Random(seed).nextBytes(b);
        MemorySegment.copy(b, 0, s, ValueLayout.JAVA_BYTE, 0, b.length);
        return s;
    }
}
