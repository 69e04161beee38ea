package dev.arrayd.devices.nullbackend;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.KernelCompiler;
import dev.arrayd.devices.api.support.AbstractBackend;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;

/**
 * The null backend (IREE's null driver is the model): a real backend of the SPI whose devices complete
 * commands without computing ({@link NullDevice}), whose compiler compiles nothing ({@link NullCompiler}),
 * and which is always available. The scheduler's tests run on it (with a {@link NullBehaviour} that adds
 * kernels written in Java), its benchmarks measure the scheduler on it, and a new backend starts from a
 * copy of this package: each class is the smallest complete form of its SPI role.
 */
public final class NullBackend extends AbstractBackend<NullDevice> {

    public static final String NAME = "null";

    private final NullOptions options;
    private final NullCompiler compiler;

    public NullBackend() {
        this(NullOptions.defaults());
    }

    public NullBackend(NullOptions options) {
        super(NAME, false);
        this.options = options;
        this.compiler = new NullCompiler(options.dialects());
    }

    @Override
    protected Optional<String> probe() {
        return Optional.empty(); // nothing native to look for
    }

    /** {@code count} devices (0: one), {@code null:0 ..}, as {@link NullOptions} describes them. */
    @Override
    protected void open(int count, List<NullDevice> opened) {
        long groupSize = options.maxWorkGroupSize();
        for (int i = 0; i < Math.max(1, count); i++) {
            DeviceInfo info = new DeviceInfo(new DeviceId(NAME, i), "null device", options.memoryBytes(),
                    options.computeUnits(), groupSize, List.of(groupSize, groupSize, groupSize), 0, options.baseAlignment(),
                    EnumSet.allOf(DType.class), options.suggestedStreams(), true, options.dialects(), 3);
            opened.add(new NullDevice(info, options, this));
        }
    }

    @Override
    public KernelCompiler compiler() {
        return compiler;
    }

    /** The devices opened, as null devices (their counters and hooks). */
    public List<NullDevice> nullDevices() {
        return opened();
    }

    /** Modules compiled and not yet unloaded. */
    public int loadedModules() {
        return compiler.loadedModules();
    }
}
