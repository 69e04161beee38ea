package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.support.CommandFuture;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.conformance.AbstractDeviceConformanceTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What only the CPU backend promises: core and memory splitting, gcc handling, its errors. */
class CpuBackendTest {

    private final List<AutoCloseable> toClose = new ArrayList<>();
    private Set<Thread> threadsBefore;

    @BeforeEach
    void snapshotThreads() {
        threadsBefore = Set.copyOf(Thread.getAllStackTraces().keySet());
    }

    @AfterEach
    void closeAndCheckThreads() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("arrayd-") && !threadsBefore.contains(t)) {
                t.join(TimeUnit.SECONDS.toMillis(60));
                assertFalse(t.isAlive(), () -> "thread left alive: " + t.getName());
            }
        }
    }

    private <T extends AutoCloseable> T closing(T resource) {
        toClose.add(resource);
        return resource;
    }

    private CpuBackend availableBackend(CpuOptions options) {
        CpuBackend backend = closing(new CpuBackend(options));
        Assumptions.assumeTrue(backend.unavailableReason().isEmpty(), () -> "cpu backend: " + backend.unavailableReason().orElseThrow());
        return backend;
    }

    private Kernel compile(CpuBackend backend, String kernel) {
        KernelModule module = closing(backend.compiler().compile(new KernelSource(Dialect.C, CpuKernels.source(kernel),
                List.of(AbstractDeviceConformanceTest.cannedSignature(kernel)))));
        return module.kernels().getFirst();
    }

    private static long run(NativeStream stream, DeviceCommand command) throws Exception {
        CommandFuture done = new CommandFuture();
        stream.submit(command, done);
        try {
            return done.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw (Exception) e.getCause();
        }
    }

    @Test
    void oneDeviceGetsEveryCore() {
        CpuBackend backend = closing(new CpuBackend());
        List<Device> devices = backend.openDevices(0);
        assertEquals(1, devices.size());
        Device d = devices.getFirst();
        assertEquals(DeviceId.parse("cpu:0"), d.id());
        assertEquals(Runtime.getRuntime().availableProcessors(), d.info().computeUnits());
        assertEquals(HostProbe.physicalMemoryBytes() / 2, d.info().memoryBytes());
        assertEquals(64, d.info().baseAlignment());
        assertEquals(EnumSet.allOf(DType.class), d.info().dtypes());
        assertEquals(Set.of(Dialect.C, Dialect.IR), d.info().dialects());
        assertEquals(List.of(1024L, 1024L, 1024L), d.info().maxWorkItemSizes());
        assertEquals(1024, d.info().maxWorkGroupSize());
        assertEquals(48 * 1024, d.info().localMemoryBytes()); // what an IR kernel may use (IrValidator.MAX_LOCAL_BYTES)
        assertEquals(2, d.info().suggestedStreams());
        assertEquals(3, d.info().maxGridDims());
        assertTrue(d.info().unifiedMemory());
        assertFalse(d.info().name().isBlank());
    }

    @Test
    void cpu2SplitsCoresAndMemory() {
        CpuBackend backend = closing(new CpuBackend());
        List<Device> devices = backend.openDevices(2);
        int cores = Runtime.getRuntime().availableProcessors();
        assertEquals(List.of(DeviceId.parse("cpu:0"), DeviceId.parse("cpu:1")), devices.stream().map(Device::id).toList());
        for (Device d : devices) {
            assertEquals(Math.max(1, cores / 2), d.info().computeUnits(), d.id().toString());
            assertEquals(HostProbe.physicalMemoryBytes() / 2 / 2, d.info().memoryBytes(), d.id().toString());
        }
        ArraydException twice = assertThrows(ArraydException.class, () -> backend.openDevices(1));
        assertEquals(ErrorCode.FAILED_PRECONDITION, twice.code());
    }

    @Test
    void deviceThreadsGivesEveryDeviceThatManyWhateverTheCores() {
        CpuBackend one = closing(new CpuBackend(CpuOptions.defaults().withDeviceThreads(1)));
        List<Device> two = one.openDevices(2);
        for (Device d : two) {
            assertEquals(1, d.info().computeUnits(), d.id().toString());
            assertEquals(1, ((CpuDevice) d).threads(), d.id().toString());
            assertNull(((CpuDevice) d).pool(), "one thread: the stream's own, no helpers");
        }
        CpuBackend three = closing(new CpuBackend(CpuOptions.defaults().withDeviceThreads(3)));
        CpuDevice d = (CpuDevice) three.openDevices(1).getFirst();
        assertEquals(3, d.info().computeUnits());
        assertEquals(2, d.pool().size(), "the stream's thread works along with two helpers");
    }

    @Test
    void zeroDeviceThreadsSplitsTheCoresAtLeastOneEach() {
        assertEquals(8, CpuBackend.threadsPerDevice(0, 8, 1));
        assertEquals(4, CpuBackend.threadsPerDevice(0, 8, 2));
        assertEquals(2, CpuBackend.threadsPerDevice(0, 8, 3));
        assertEquals(1, CpuBackend.threadsPerDevice(0, 2, 4));
        assertEquals(1, CpuBackend.threadsPerDevice(1, 8, 2));
        assertEquals(6, CpuBackend.threadsPerDevice(6, 2, 2), "oversubscribing is the operator's call");
        assertEquals(0, CpuOptions.defaults().deviceThreads());
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
                () -> CpuOptions.defaults().withDeviceThreads(-1));
        assertTrue(negative.getMessage().contains("deviceThreads: -1"), negative::getMessage);
        IllegalArgumentException huge = assertThrows(IllegalArgumentException.class,
                () -> CpuOptions.defaults().withDeviceThreads(CpuOptions.MAX_DEVICE_THREADS + 1));
        assertTrue(huge.getMessage().contains(Integer.toString(CpuOptions.MAX_DEVICE_THREADS + 1)), huge::getMessage);
    }

    @Test
    void deviceMemoryIsConfigurableAndEnforced() {
        CpuBackend backend = closing(new CpuBackend(CpuOptions.defaults().withDeviceMemoryBytes(1 << 20)));
        Device d = backend.openDevices(3).get(2);
        assertEquals(1 << 20, d.info().memoryBytes());
        d.allocPool(1, 600_000, 64);
        ArraydException e = assertThrows(ArraydException.class, () -> d.allocPool(2, 500_000, 64));
        assertEquals(ErrorCode.RESOURCE_EXHAUSTED, e.code());
        assertTrue(e.getMessage().contains("cpu:2") && e.getMessage().contains("500000")
                && e.getMessage().contains(Long.toString((1 << 20) - 600_000)), e::getMessage);
        d.freePool(1);
        d.allocPool(2, 500_000, 64);
        assertEquals(500_000, ((CpuDevice) d).usedBytes());
    }

    @Test
    void slabsHonourAlignment() throws Exception {
        CpuBackend backend = closing(new CpuBackend());
        CpuDevice d = (CpuDevice) backend.openDevices(1).getFirst();
        d.allocPool(1, 100, 1);
        d.allocPool(2, 100, 4096);
        assertEquals(0, d.address(new MemRef(1, 0, 100), "ref", -1) % 64);
        assertEquals(0, d.address(new MemRef(2, 0, 100), "ref", -1) % 4096);
        ArraydException badAlignment = assertThrows(ArraydException.class, () -> d.allocPool(3, 100, 48));
        assertEquals(ErrorCode.INVALID_ARGUMENT, badAlignment.code());
        ArraydException outside = assertThrows(ArraydException.class, () -> d.memsetZero(new MemRef(1, 64, 37)));
        assertEquals(ErrorCode.OUT_OF_RANGE, outside.code());
        assertTrue(outside.getMessage().contains("pool1+64[37]"), outside::getMessage);
    }

    @Test
    void missingGccMakesTheBackendUnavailableWithTheReason() {
        CpuBackend backend = closing(new CpuBackend(CpuOptions.defaults().withGccCommand("/nonexistent/arrayd-gcc")));
        String reason = backend.unavailableReason().orElseThrow();
        assertTrue(reason.contains("/nonexistent/arrayd-gcc"), reason);
        ArraydException e = assertThrows(ArraydException.class, () -> backend.compiler().compile(
                new KernelSource(Dialect.C, CpuKernels.source("empty"), List.of(AbstractDeviceConformanceTest.cannedSignature("empty")))));
        assertEquals(ErrorCode.UNAVAILABLE, e.code());
    }

    @Test
    void compileTimeLimitIsDeadlineExceeded() {
        // a fresh cache: a hit would not run gcc at all
        CpuBackend backend = availableBackend(CpuOptions.defaults().withCompileTimeout(Duration.ZERO)
                .withCacheDir(freshCacheDir()));
        ArraydException e = assertThrows(ArraydException.class, () -> backend.compiler().compile(
                new KernelSource(Dialect.C, CpuKernels.source("vadd"), List.of(AbstractDeviceConformanceTest.cannedSignature("vadd")))));
        assertEquals(ErrorCode.DEADLINE_EXCEEDED, e.code(), e::toString);
    }

    @Test
    void otherDialectsAndBadNamesAreInvalidArgument() {
        CpuBackend backend = availableBackend(CpuOptions.defaults());
        ArraydException dialect = assertThrows(ArraydException.class, () -> backend.compiler().compile(
                new KernelSource(Dialect.OPENCL_C, "__kernel void k() {}", List.of(new KernelSignature("k", List.of())))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, dialect.code());
        assertTrue(dialect.getMessage().contains("OPENCL_C"), dialect::getMessage);
        ArraydException name = assertThrows(ArraydException.class, () -> backend.compiler().compile(
                new KernelSource(Dialect.C, "", List.of(new KernelSignature("no-dash", List.of())))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, name.code());
        assertTrue(name.getMessage().contains("\"no-dash\""), name::getMessage);
    }

    @Test
    void warningsComeBackAsDiagnosticsAlsoFromTheCacheAndTheLibraryStaysCached() throws Exception {
        Path cacheDir = freshCacheDir();
        CpuBackend backend = availableBackend(CpuOptions.defaults().withCacheDir(cacheDir));
        KernelSource source = new KernelSource(Dialect.C, "#warning \"arrayd test warning\"\n" + CpuKernels.source("empty"),
                List.of(AbstractDeviceConformanceTest.cannedSignature("empty")));
        KernelModule module = backend.compiler().compile(source);
        assertTrue(module.diagnostics().contains("kernel.c:1") && module.diagnostics().contains("arrayd test warning"),
                module::diagnostics);
        // gcc quotes the user's own line, not the generated header's
        assertTrue(module.diagnostics().contains("#warning \"arrayd test warning\""), module::diagnostics);
        assertFalse(module.cacheHit());
        CpuKernelModule loaded = ((CpuKernel) module.kernels().getFirst()).module();
        assertNull(loaded.directory(), "a cached library has no private directory to delete");
        Path library = loaded.library();
        assertTrue(library.startsWith(cacheDir), library::toString);
        module.close();
        assertTrue(Files.exists(library), library::toString);
        KernelModule again = backend.compiler().compile(source);
        assertTrue(again.cacheHit());
        assertEquals(module.diagnostics(), again.diagnostics());
        again.close();
    }

    static Path freshCacheDir() {
        try {
            Path dir = Files.createTempDirectory("arrayd-cache-test-");
            dir.toFile().deleteOnExit();
            return dir;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void signatureMismatchIsACompileErrorInTheTrampoline() {
        CpuBackend backend = availableBackend(CpuOptions.defaults());
        // declared f64 buffer, but the C function takes float *
        KernelSignature wrong = new KernelSignature("vadd", List.of(
                dev.arrayd.devices.api.KernelParam.buffer("a", DType.F64, dev.arrayd.devices.api.Access.READ),
                dev.arrayd.devices.api.KernelParam.buffer("b", DType.F32, dev.arrayd.devices.api.Access.READ),
                dev.arrayd.devices.api.KernelParam.buffer("c", DType.F32, dev.arrayd.devices.api.Access.WRITE),
                dev.arrayd.devices.api.KernelParam.scalar("n", DType.I32)));
        var e = assertThrows(dev.arrayd.devices.api.CompileException.class, () -> backend.compiler().compile(
                new KernelSource(Dialect.C, CpuKernels.source("vadd"), List.of(wrong))));
        assertTrue(e.diagnostics().contains(CSourceAssembler.TRAMPOLINE_FILE), e::diagnostics);
    }

    @Test
    void aLaunchsCompletionRunsWithoutItsComputeSlot() throws Exception {
        assertEquals(1, freeSlotsInCompletion(CpuOptions.DEFAULT_COMPUTE_NICE), "on the completion thread");
        assertEquals(1, freeSlotsInCompletion(0), "on the worker (kernels not lowered)");
    }

    /**
     * The free compute slots of a one-thread device (one slot) seen by a launch's completion. Were the
     * slot still held through the callback (the scheduler's completion work), the device's other streams
     * could not start their kernels meanwhile.
     */
    private int freeSlotsInCompletion(int computeNice) throws Exception {
        CpuBackend backend = availableBackend(CpuOptions.defaults().withDeviceThreads(1).withComputeNice(computeNice));
        CpuDevice device = (CpuDevice) backend.openDevices(1).getFirst();
        NativeStream a = closing(device.newStream("a"));
        Kernel empty = compile(backend, "empty");
        CompletableFuture<Integer> free = new CompletableFuture<>();
        a.submit(new DeviceCommand.Launch(empty, new long[] {1}, null, List.of()), new CommandCallback() {
            @Override
            public void completed(long deviceNanos) {
                free.complete(device.computeSlots().availablePermits());
            }

            @Override
            public void failed(ArraydException cause) {
                free.completeExceptionally(cause);
            }
        });
        return free.get(30, TimeUnit.SECONDS);
    }

    @Test
    void launchOfAClosedModuleIsRefused() throws Exception {
        CpuBackend backend = availableBackend(CpuOptions.defaults());
        NativeStream stream = closing(backend.openDevices(1).getFirst().newStream("s"));
        Kernel empty = compile(backend, "empty");
        run(stream, new DeviceCommand.Launch(empty, new long[] {1}, null, List.of()));
        ((CpuKernel) empty).module().close();
        ArraydException e = assertThrows(ArraydException.class,
                () -> run(stream, new DeviceCommand.Launch(empty, new long[] {1}, null, List.of())));
        assertEquals(ErrorCode.FAILED_PRECONDITION, e.code());
    }

    @Test
    void kernelsRunOnEveryDeviceButOnlyOnTheirOwnSlabs() throws Exception {
        CpuBackend backend = availableBackend(CpuOptions.defaults().withDeviceMemoryBytes(1 << 24));
        List<Device> devices = backend.openDevices(2);
        Kernel step = compile(backend, "step");
        devices.get(1).allocPool(7, 64, 64);
        devices.get(1).memsetZero(new MemRef(7, 0, 64));
        NativeStream on1 = closing(devices.get(1).newStream("s1"));
        NativeStream on0 = closing(devices.get(0).newStream("s0"));
        run(on1, new DeviceCommand.Launch(step, new long[] {1}, null, List.of(new KernelArg.Buffer(new MemRef(7, 0, 8)), KernelArg.Scalar.i64(5))));
        ArraydException e = assertThrows(ArraydException.class, () -> run(on0, new DeviceCommand.Launch(step, new long[] {1}, null,
                List.of(new KernelArg.Buffer(new MemRef(7, 0, 8)), KernelArg.Scalar.i64(5)))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().contains("args[0]") && e.getMessage().contains("cpu:0"), e::getMessage);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment out = arena.allocate(8);
            run(on1, new DeviceCommand.Download(new MemRef(7, 0, 8), out));
            assertEquals(5, out.get(ValueLayout.JAVA_LONG, 0));
        }
    }

    @Test
    void largeGridsUseTheDevicesWorkerThreads() throws Exception {
        Assumptions.assumeTrue(Runtime.getRuntime().availableProcessors() > 1, "needs more than one core");
        CpuBackend backend = availableBackend(CpuOptions.defaults().withDeviceMemoryBytes(1 << 26));
        Device d = backend.openDevices(1).getFirst();
        Kernel index3d = compile(backend, "index3d");
        long items = 4 * StreamExecutor.SPLIT_THRESHOLD;
        d.allocPool(1, items * 24, 64);
        NativeStream stream = closing(d.newStream("s"));
        run(stream, new DeviceCommand.Launch(index3d, new long[] {items}, null, List.of(new KernelArg.Buffer(new MemRef(1, 0, items * 24)))));
        boolean sawWorker = Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().startsWith("arrayd-cpu0-worker-") && t.isDaemon());
        assertTrue(sawWorker, "a daemon thread arrayd-cpu0-worker-N helped");
    }

    @Test
    void aFailingCommandOrCallbackNeverKillsTheWorker() throws Exception {
        CpuBackend backend = availableBackend(CpuOptions.defaults());
        Device d = backend.openDevices(1).getFirst();
        d.allocPool(1, 64, 64);
        NativeStream stream = closing(d.newStream("s"));
        Arena gone = Arena.ofShared();
        MemorySegment closedHost = gone.allocate(64);
        gone.close();
        ArraydException internal = assertThrows(ArraydException.class, () -> run(stream, new DeviceCommand.Upload(closedHost, new MemRef(1, 0, 64))));
        assertEquals(ErrorCode.INTERNAL, internal.code(), internal::toString);

        CompletableFuture<Void> after = new CompletableFuture<>();
        stream.submit(new DeviceCommand.Fill(new MemRef(1, 0, 64), 1, 1), new CommandCallback() {
            @Override
            public void completed(long deviceNanos) {
                throw new IllegalStateException("a misbehaving callback");
            }

            @Override
            public void failed(ArraydException cause) {}
        });
        stream.submit(new DeviceCommand.Fill(new MemRef(1, 0, 64), 2, 1), new CommandCallback() {
            @Override
            public void completed(long deviceNanos) {
                after.complete(null);
            }

            @Override
            public void failed(ArraydException cause) {
                after.completeExceptionally(cause);
            }
        });
        after.get(60, TimeUnit.SECONDS);

        ArraydException width = assertThrows(ArraydException.class, () -> run(stream, new DeviceCommand.Fill(new MemRef(1, 0, 64), 0, 3)));
        assertEquals(ErrorCode.INVALID_ARGUMENT, width.code());
        ArraydException size = assertThrows(ArraydException.class,
                () -> run(stream, new DeviceCommand.Download(new MemRef(1, 0, 64), MemorySegment.ofArray(new byte[32]))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, size.code());
        assertTrue(stream.isIdle());
    }
}
