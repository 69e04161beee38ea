package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.support.AbstractBackend;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.KernelCompiler;

import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The CPU backend: C kernels compiled by gcc and called through Java FFM, slabs in off-heap memory.
 *
 * <p>{@code openDevices(0)} or {@code (1)} gives one device {@code cpu:0} with every core;
 * {@code openDevices(n)} gives {@code cpu:0 .. cpu:n-1}, each with {@code max(1, cores / n)} threads
 * (or exactly {@link CpuOptions#deviceThreads()} when that is set) and an equal share of the memory
 * (see {@link CpuOptions#deviceMemoryBytes()}). Devices of one backend can copy from each other
 * directly ({@link Device#canCopyFrom}). The backend is
 * unavailable when gcc cannot be run; its devices still hold memory and copy, but nothing compiles.
 */
public final class CpuBackend extends AbstractBackend<CpuDevice> {

    public static final String NAME = "cpu";

    static final long BASE_ALIGNMENT = 64;
    /**
     * Local (work-group) memory an IR kernel may use on the cpu: what every backend can give a group
     * ({@link dev.arrayd.devices.api.ir.IrValidator#MAX_LOCAL_BYTES}). A phased group keeps its local
     * arrays on the native stack of the thread running it; the compiler refuses kernels above this.
     */
    static final long LOCAL_MEMORY_BYTES = dev.arrayd.devices.api.ir.IrValidator.MAX_LOCAL_BYTES;
    static final long MAX_WORK_GROUP_SIZE = 1024;

    private final CpuOptions options;
    private final CpuKernelCompiler compiler;

    public CpuBackend() {
        this(CpuOptions.defaults());
    }

    /** The settings this backend was made with. */
    public CpuOptions options() {
        return options;
    }

    public CpuBackend(CpuOptions options) {
        super(NAME, true); // memory and transfers work without gcc: only compiling needs it
        this.options = options;
        this.compiler = new CpuKernelCompiler(options.gccCommand(), options.compileTimeout(), this::unavailableReason,
                new KernelCache(options.cacheDir(), options.cacheMaxBytes()), options.forceGuards(),
                () -> gcc().identity(), options.vectorBits(), options.lanes());
    }

    /**
     * The one run of {@code gcc --version}: whether gcc works, and its identity for the compile cache's keys.
     * The probe also reads the identity of the code that renders IR ({@link CpuKernelCompiler#codeIdentity}).
     */
    private volatile HostProbe.Gcc gcc;

    private HostProbe.Gcc gcc() {
        HostProbe.Gcc g = gcc;
        if (g == null) {
            synchronized (this) {
                g = gcc;
                if (g == null) {
                    g = gcc = HostProbe.gcc(options.gccCommand());
                }
            }
        }
        return g;
    }

    @Override
    protected Optional<String> probe() {
        Optional<String> problem = gcc().problem();
        if (problem.isEmpty()) {
            compiler.codeIdentity(); // read now, when the daemon starts, not on its first compile
        }
        return problem;
    }

    /** The compile cache's idle libraries are closed with the backend. */
    @Override
    protected void closed() {
        compiler.close();
    }

    /** {@code count} devices (0 or 1: one) splitting the cores and half the host's memory. */
    @Override
    protected void open(int count, List<CpuDevice> devices) {
        int n = Math.max(1, count);
        int threads = threadsPerDevice(options.deviceThreads(), HostProbe.cores(), n);
        long memory = options.deviceMemoryBytes() > 0
                ? options.deviceMemoryBytes()
                : Math.max(BASE_ALIGNMENT, HostProbe.physicalMemoryBytes() / 2 / n);
        String model = HostProbe.cpuModel();
        for (int i = 0; i < n; i++) {
            DeviceInfo info = new DeviceInfo(new DeviceId(NAME, i), model, memory, threads, MAX_WORK_GROUP_SIZE,
                    List.of(1024L, 1024L, 1024L), LOCAL_MEMORY_BYTES, BASE_ALIGNMENT, EnumSet.allOf(DType.class),
                    2, true, Set.of(Dialect.C, Dialect.IR), 3);
            devices.add(new CpuDevice(info, threads, this, options.computeNice()));
        }
    }

    /** The configured count when positive; otherwise the cores split among {@code devices}, at least one each. */
    static int threadsPerDevice(int configured, int cores, int devices) {
        return configured > 0 ? configured : Math.max(1, cores / devices);
    }

    @Override
    public KernelCompiler compiler() {
        return compiler;
    }


}
