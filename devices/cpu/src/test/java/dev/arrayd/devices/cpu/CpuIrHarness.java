package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.support.CommandFuture;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrModule;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Runs IR kernels on a real CPU device for tests: one backend, one device, one stream, one slab per
 * harness; buffers are carved out of the slab at 64-byte steps so that neighbours can be checked.
 */
final class CpuIrHarness implements AutoCloseable {

    static final long SLAB = 64L << 20;

    final CpuBackend backend;
    final CpuDevice device;
    final NativeStream stream;
    private long next;
    private final List<KernelModule> modules = new ArrayList<>();

    CpuIrHarness() {
        this(CpuOptions.defaults());
    }

    CpuIrHarness(CpuOptions options) {
        backend = new CpuBackend(options);
        device = (CpuDevice) backend.openDevices(1).getFirst();
        device.allocPool(1, SLAB, 64);
        stream = device.newStream("ir-test");
    }

    boolean available() {
        return backend.unavailableReason().isEmpty();
    }

    List<Kernel> compile(IrKernel... kernels) {
        KernelModule m = backend.compiler().compile(KernelSource.ir(new IrModule(List.of(kernels))));
        modules.add(m);
        return m.kernels();
    }

    /** A fresh buffer of {@code bytes} (rounded up to 64 for the next one), zeroed. */
    MemRef alloc(long bytes) {
        MemRef ref = new MemRef(1, next, bytes);
        next += (bytes + 63) / 64 * 64 + 64;
        if (next > SLAB) {
            throw new IllegalStateException("harness slab exhausted");
        }
        segment(ref).fill((byte) 0);
        return ref;
    }

    void reset() {
        next = 0;
    }

    MemorySegment segment(MemRef ref) {
        return device.segment(ref, "test");
    }

    void launch(Kernel k, long[] global, long[] local, List<KernelArg> args) throws Exception {
        CommandFuture done = new CommandFuture();
        stream.submit(new DeviceCommand.Launch(k, global, local, args), done);
        try {
            done.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw (Exception) e.getCause();
        }
    }

    @Override
    public void close() {
        modules.forEach(KernelModule::close);
        stream.close();
        backend.close();
    }
}
