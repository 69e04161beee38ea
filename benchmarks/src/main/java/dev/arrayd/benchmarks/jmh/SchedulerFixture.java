package dev.arrayd.benchmarks.jmh;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.scheduler.Buffer;
import dev.arrayd.scheduler.CommandSpec;
import dev.arrayd.scheduler.ModuleSpec;
import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.scheduler.SchedulerConfig;
import dev.arrayd.scheduler.Session;
import java.util.List;
import java.util.Map;
import java.util.Set;
import dev.arrayd.devices.nullbackend.NullBackend;
import dev.arrayd.devices.nullbackend.NullDevice;
import dev.arrayd.devices.nullbackend.NullOptions;

/**
 * A scheduler over null devices ({@link NullBackend}: no data, commands completed on the calling thread,
 * at once or when drained) with a session, an empty kernel, a kernel taking one READ_WRITE buffer, and that
 * buffer: the state the scheduler benchmarks share. What is left to measure is the scheduler.
 */
final class SchedulerFixture implements AutoCloseable {

    final NullBackend backend;
    final NullDevice device;
    final Scheduler scheduler;
    final Session session;
    final long emptyKernel;
    final long touchKernel;
    final Buffer buffer;
    private long nextEvent = 1;
    // The ops are immutable and the same for every command, so they are built once: a server decoding a
    // request builds them per command, but that is the transport's cost, not the scheduler's (which is
    // what these benchmarks measure). What stays per command is the CommandSpec (it carries the event id)
    // and the batch list.
    private static final long[] NO_WAITS = new long[0];
    private final CommandSpec.LaunchOp emptyOp;
    private final CommandSpec.LaunchOp touchOp;

    SchedulerFixture(boolean deferred) {
        this(deferred, 1);
    }

    /**
     * With {@code devices} null devices (null:0, null:1, ...), {@link #device} the first: each with one shared
     * stream (so a session's default stream is known), commands completed inside {@code submit}, or — when
     * {@code deferred} — queued until {@link NullDevice#drainAll()}.
     */
    SchedulerFixture(boolean deferred, int devices) {
        backend = new NullBackend(deviceOptions(deferred));
        List<dev.arrayd.devices.api.Device> all = backend.openDevices(devices);
        device = (NullDevice) all.getFirst();
        scheduler = new Scheduler(SchedulerConfig.defaults().withAllowNativeSource(true), all,
                Map.of(NullBackend.NAME, backend.compiler()));
        session = scheduler.openSession("jmh", 600_000);
        var compiled = scheduler.compile(session, List.of(new ModuleSpec(new KernelSource(Dialect.C, "empty touch", List.of(
                new KernelSignature("empty", List.of()),
                new KernelSignature("touch", List.of(KernelParam.buffer("a", DType.F32, Access.READ_WRITE))))),
                NullBackend.NAME)));
        emptyKernel = compiled.getFirst().kernels().get(0).handle();
        touchKernel = compiled.getFirst().kernels().get(1).handle();
        buffer = scheduler.createBuffer(session, DType.F32, new long[] {16}, "", "");
        emptyOp = new CommandSpec.LaunchOp(emptyKernel, new long[] {1}, NO_WAITS, List.of(), "");
        touchOp = new CommandSpec.LaunchOp(touchKernel, new long[] {1}, NO_WAITS,
                List.of(new CommandSpec.BufferArg(buffer.handle())), "");
    }

    /** An empty launch signalling a fresh event id. */
    CommandSpec emptyLaunch() {
        return emptyLaunch(NO_WAITS);
    }

    /** An empty launch signalling a fresh event id, waiting on {@code waits}. */
    CommandSpec emptyLaunch(long[] waits) {
        return new CommandSpec(nextEvent++, waits, 0, emptyOp);
    }

    /** A launch that reads and writes the buffer (hazard tracking). */
    CommandSpec touchLaunch() {
        return touchLaunch(NO_WAITS);
    }

    /** A launch that reads and writes the buffer (hazard tracking), waiting on {@code waits}. */
    CommandSpec touchLaunch(long[] waits) {
        return new CommandSpec(nextEvent++, waits, 0, touchOp);
    }

    /** Takes {@code n} event ids (a graph replay signals a block of them). */
    long takeEvents(int n) {
        long first = nextEvent;
        nextEvent += n;
        return first;
    }

    /** The event id the next command will signal. */
    long nextEvent() {
        return nextEvent;
    }

    /** Null devices with nothing behind their slabs, completing commands on the calling thread. */
    static NullOptions deviceOptions(boolean deferred) {
        return NullOptions.defaults().withMemoryBytes(1L << 40).withStoresData(false)
                .withCompletion(deferred ? NullOptions.Completion.MANUAL : NullOptions.Completion.IMMEDIATE)
                .withShape(1, 1, 1024, 64).withDialects(Set.of(Dialect.C));
    }

    @Override
    public void close() {
        scheduler.close();
        backend.close();
    }
}
