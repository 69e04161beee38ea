package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.support.CommandFuture;
import dev.arrayd.devices.api.Device;
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
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Runs IR kernels on the first OpenCL device for tests: one backend, one device, one stream, one
 * slab; buffers are carved out of the slab at 64-byte steps so that neighbours can be checked, and
 * moved to and from the host by uploads and downloads on the stream. Where there is no OpenCL
 * runtime, {@link #unavailableReason()} says why and nothing else may be called.
 */
final class OpenClIrHarness implements AutoCloseable {

    static final long SLAB = 16L << 20;

    final OpenClBackend backend = new OpenClBackend();
    final List<Device> devices;
    final OpenClDevice device;
    final NativeStream stream;
    private final Optional<String> reason;
    private final List<KernelModule> modules = new ArrayList<>();
    private long next;

    OpenClIrHarness() {
        reason = backend.unavailableReason();
        if (reason.isPresent()) {
            System.out.println("[opencl ir] skipping: " + reason.get());
            devices = List.of();
            device = null;
            stream = null;
            return;
        }
        devices = backend.openDevices(0);
        device = (OpenClDevice) devices.getFirst();
        device.allocPool(1, SLAB, device.info().baseAlignment());
        device.memsetZero(new MemRef(1, 0, SLAB));
        stream = device.newStream("ir-test");
    }

    Optional<String> unavailableReason() {
        return reason;
    }

    List<Kernel> compile(IrKernel... kernels) {
        KernelModule m = backend.compiler().compile(KernelSource.ir(new IrModule(List.of(kernels))));
        modules.add(m);
        return m.kernels();
    }

    /** A fresh buffer of {@code bytes} (the next one starts 64 bytes past its end), zeroed. */
    MemRef alloc(long bytes) {
        MemRef ref = new MemRef(1, next, bytes);
        next += (bytes + 63) / 64 * 64 + 64;
        if (next > SLAB) {
            throw new IllegalStateException("harness slab exhausted");
        }
        write(ref, MemorySegment.ofArray(new byte[Math.toIntExact(bytes)]));
        return ref;
    }

    void reset() {
        next = 0;
    }

    void write(MemRef ref, MemorySegment bytes) {
        run(new DeviceCommand.Upload(bytes, ref));
    }

    /** The bytes of {@code ref}, as a heap segment. */
    MemorySegment read(MemRef ref) {
        MemorySegment out = MemorySegment.ofArray(new byte[(int) ref.bytes()]);
        run(new DeviceCommand.Download(ref, out));
        return out;
    }

    void launch(Kernel k, long[] global, long[] local, List<KernelArg> args) {
        run(new DeviceCommand.Launch(k, global, local, args));
    }

    void run(DeviceCommand command) {
        run(stream, command);
    }

    static void run(NativeStream on, DeviceCommand command) {
        CommandFuture done = new CommandFuture();
        on.submit(command, done);
        try {
            done.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw (RuntimeException) e.getCause();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Override
    public void close() {
        modules.forEach(KernelModule::close);
        if (stream != null) {
            stream.close();
        }
        backend.close();
    }
}
