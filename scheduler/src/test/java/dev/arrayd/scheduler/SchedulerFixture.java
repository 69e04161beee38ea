package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.ArraydException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Map;
import dev.arrayd.devices.nullbackend.NullBackend;

/**
 * A scheduler over test devices (null devices with Java kernels), with the kernels the tests use, and the invariants checked when
 * it closes: no slab left on any device, no stream thread left, no module left loaded.
 */
final class SchedulerFixture implements AutoCloseable {

    static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;

    /** b[i] = b[i] * 3 + a[i] + k */
    static final KernelSignature MIX = new KernelSignature("mix", List.of(
            KernelParam.buffer("a", DType.I64, Access.READ),
            KernelParam.buffer("b", DType.I64, Access.READ_WRITE),
            KernelParam.scalar("k", DType.I64)));

    /** out[i] = k * i + 1 */
    static final KernelSignature SET = new KernelSignature("set", List.of(
            KernelParam.buffer("out", DType.I64, Access.WRITE),
            KernelParam.scalar("k", DType.I64)));

    /** b[i] += a[i] (a gradient merge: {@code a} is usually the stream's merge buffer) */
    static final KernelSignature ACC = new KernelSignature("acc", List.of(
            KernelParam.buffer("a", DType.I64, Access.READ),
            KernelParam.buffer("b", DType.I64, Access.READ_WRITE)));

    /** always fails */
    static final KernelSignature BOOM = new KernelSignature("boom", List.of(
            KernelParam.buffer("out", DType.I64, Access.WRITE)));

    final TestDevices testDevices;
    final List<TestDevice> devices;
    final Scheduler scheduler;
    /** Devices not given to the scheduler at construction (see {@link #addLate()}). */
    private final List<Device> late = new java.util.ArrayList<>();

    SchedulerFixture(int deviceCount) {
        this(deviceCount, 1L << 24, 1L << 20);
    }

    SchedulerFixture(int deviceCount, long memory, long slabBytes) {
        this(deviceCount, memory, slabBytes, 0, System::nanoTime);
    }

    /**
     * @param dispatchDepth commands each device may be handed at once (0 = automatic)
     * @param clock         the scheduler's clock (deadlines)
     */
    SchedulerFixture(int deviceCount, long memory, long slabBytes, int dispatchDepth, java.util.function.LongSupplier clock) {
        this(deviceCount, memory, slabBytes, dispatchDepth, clock, (i, d) -> d);
    }

    /** @param wrap what the scheduler sees of device {@code i} (a wrapper that reports more, or the device itself) */
    SchedulerFixture(int deviceCount, long memory, long slabBytes, int dispatchDepth, java.util.function.LongSupplier clock,
            java.util.function.BiFunction<Integer, Device, Device> wrap) {
        this(deviceCount, deviceCount, memory, slabBytes, dispatchDepth, clock, wrap);
    }

    /**
     * @param present       how many of the devices the scheduler starts with; {@link #addLate()} adds the others
     * @param dispatchDepth commands each device may be handed at once (0 = automatic)
     */
    static SchedulerFixture withLate(int deviceCount, int present, int dispatchDepth) {
        return new SchedulerFixture(deviceCount, present, 1L << 24, 1L << 20, dispatchDepth, System::nanoTime, (i, d) -> d);
    }

    private SchedulerFixture(int deviceCount, int present, long memory, long slabBytes, int dispatchDepth,
            java.util.function.LongSupplier clock, java.util.function.BiFunction<Integer, Device, Device> wrap) {
        testDevices = new TestDevices(deviceCount, memory, Map.of(
                "mix", (bufs, scalars, global) -> {
                    MemorySegment a = bufs.get(0);
                    MemorySegment b = bufs.get(1);
                    long k = scalars.get(0);
                    for (long i = 0; i < global[0]; i++) {
                        b.setAtIndex(I64, i, b.getAtIndex(I64, i) * 3 + a.getAtIndex(I64, i) + k);
                    }
                },
                "set", (bufs, scalars, global) -> {
                    for (long i = 0; i < global[0]; i++) {
                        bufs.get(0).setAtIndex(I64, i, scalars.get(0) * i + 1);
                    }
                },
                "acc", (bufs, scalars, global) -> {
                    for (long i = 0; i < global[0]; i++) {
                        bufs.get(1).setAtIndex(I64, i, bufs.get(1).getAtIndex(I64, i) + bufs.get(0).getAtIndex(I64, i));
                    }
                },
                "boom", (bufs, scalars, global) -> {
                    throw new ArraydException(ErrorCode.OUT_OF_RANGE, "boom: index 99 of out");
                }));
        devices = testDevices.devices;
        SchedulerConfig config = new SchedulerConfig(true, 0.9, slabBytes, 8, 1L << 40, 16L << 20,
                SchedulerConfig.DEFAULT_FAST_PATH_NANOS, dispatchDepth);
        List<Device> seen = new java.util.ArrayList<>();
        for (int i = 0; i < devices.size(); i++) {
            (i < present ? seen : late).add(wrap.apply(i, devices.get(i).device));
        }
        scheduler = new Scheduler(config, seen,
                Map.of(NullBackend.NAME, testDevices.backend.compiler()), clock);
    }

    /** Adds the devices held back at construction, as a backend that found them later would. */
    List<DeviceRuntime> addLate() {
        List<DeviceRuntime> added = scheduler.addDevices(List.copyOf(late));
        late.clear();
        return added;
    }

    /** A buffer argument. */
    static CommandSpec.Arg arg(Buffer b) {
        return new CommandSpec.BufferArg(b.handle());
    }

    /** An i64 scalar argument. */
    static CommandSpec.Arg sc(long v) {
        return new CommandSpec.ScalarArg(dev.arrayd.devices.api.KernelArg.Scalar.i64(v));
    }

    /** All of an i64 buffer, downloaded on {@code stream} (0 = the default stream) as event {@code event}. */
    long[] readI64(Session s, Buffer b, long stream, long event) throws Exception {
        Event e = scheduler.submit(s, List.of(new CommandSpec(event, null, stream,
                new CommandSpec.DownloadOp(b.handle(), 0, 0, Long.MAX_VALUE))), null).getFirst().toFuture()
                .get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(EventState.SUCCEEDED, e.state(), () -> String.valueOf(e.failure()));
        long[] out = new long[(int) (b.sizeBytes() / 8)];
        java.nio.ByteBuffer.wrap((byte[]) e.result()).order(java.nio.ByteOrder.nativeOrder()).asLongBuffer().get(out);
        return out;
    }

    Map<String, CompiledKernel> compileAll(Session s) {
        CompileResult r = scheduler.compile(s, List.of(new ModuleSpec(
                new KernelSource(Dialect.C, "mix set boom acc", List.of(MIX, SET, BOOM, ACC)), ""))).getFirst();
        return Map.of("mix", r.kernels().get(0), "set", r.kernels().get(1), "boom", r.kernels().get(2),
                "acc", r.kernels().get(3));
    }

    /** Modules compiled and not yet unloaded. */
    int loadedModules() {
        return testDevices.backend.loadedModules();
    }

    @Override
    public void close() {
        for (TestDevice d : devices) {
            d.open();
        }
        scheduler.close();
        for (TestDevice d : devices) {
            assertEquals(0, d.allocatedBytes(), d.id() + ": slab bytes left allocated");
            assertEquals(0, d.openStreams(), d.id() + ": stream threads left running");
        }
        assertEquals(0, loadedModules(), "modules left loaded");
        testDevices.close();
    }
}
