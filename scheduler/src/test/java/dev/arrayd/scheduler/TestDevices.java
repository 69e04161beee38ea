package dev.arrayd.scheduler;

import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.nullbackend.NullBackend;
import dev.arrayd.devices.nullbackend.NullBehaviour;
import dev.arrayd.devices.nullbackend.NullDevice;
import dev.arrayd.devices.nullbackend.NullOptions;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The devices the scheduler's tests run on: null devices ({@link NullBackend}: real slabs, real stream
 * threads, real markers) whose behaviour adds kernels written in Java, a gate, jitter and simulated device
 * time ({@link TestDevice}). Half the commands offered inline run inline, so both paths get exercised.
 */
final class TestDevices implements NullBehaviour, AutoCloseable {

    /** A kernel written in Java: buffers as segments, scalars as raw bits. */
    interface Body {
        void run(List<MemorySegment> buffers, List<Long> scalars, long[] global);
    }

    final NullBackend backend;
    final List<TestDevice> devices = new ArrayList<>();
    private final Map<String, Body> bodies;

    /** {@code count} devices of {@code memory} bytes each, running {@code bodies} by kernel name. */
    TestDevices(int count, long memory, Map<String, Body> bodies) {
        this.bodies = Map.copyOf(bodies);
        this.backend = new NullBackend(NullOptions.defaults().withMemoryBytes(memory).withShape(2, 2, 256, 16)
                .withDialects(EnumSet.of(Dialect.C)).withBehaviour(this));
        for (var d : backend.openDevices(count)) {
            devices.add(new TestDevice((NullDevice) d));
        }
    }

    /**
     * A device for tests of memory bookkeeping only: no data behind its slabs, no streams opened, nothing to
     * close (its backend holds no thread or native memory).
     */
    static NullDevice memoryOnly(long memory) {
        return (NullDevice) new NullBackend(NullOptions.defaults().withMemoryBytes(memory).withStoresData(false))
                .openDevices(1).getFirst();
    }

    private TestDevice of(NullDevice d) {
        return devices.get(d.id().ordinal());
    }

    @Override
    public long run(NullDevice device, DeviceCommand command, boolean inline, Work work) {
        return of(device).run(command, inline, work::run);
    }

    @Override
    public void launch(NullDevice device, DeviceCommand.Launch launch) {
        Body body = bodies.get(launch.kernel().name());
        if (body == null) {
            throw new IllegalStateException("no Java body for kernel " + launch.kernel().name());
        }
        List<MemorySegment> buffers = new ArrayList<>();
        List<Long> scalars = new ArrayList<>();
        for (KernelArg a : launch.args()) {
            switch (a) {
                case KernelArg.Buffer b -> buffers.add(device.segment(b.ref()));
                case KernelArg.Scalar s -> scalars.add(s.bits());
            }
        }
        body.run(buffers, scalars, launch.globalDims());
    }

    @Override
    public boolean acceptsInline(NullDevice device, DeviceCommand command) {
        TestDevice d = of(device);
        return !d.isHeld() && (d.acceptsEveryInlineRun() || ThreadLocalRandom.current().nextBoolean());
    }

    @Override
    public void handed(NullDevice device, DeviceCommand command) {
        of(device).handed.add(command);
    }

    @Override
    public void close() {
        for (TestDevice d : devices) {
            d.open();
        }
        backend.close();
    }
}
