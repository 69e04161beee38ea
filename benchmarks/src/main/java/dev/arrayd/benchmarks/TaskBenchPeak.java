package dev.arrayd.benchmarks;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.cpu.CpuBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The Task Bench peak: the same compute-bound kernel run directly through the CPU backend in this JVM,
 * no daemon, no scheduler, no gRPC: as many CPU devices and streams as the daemon's graph uses, each
 * stream fed long tasks back to back. Its FLOP/s is what the graphs' efficiency is relative to.
 */
final class TaskBenchPeak implements AutoCloseable {

    private final CpuBackend backend;
    private final KernelModule module;
    private final Kernel kernel;
    private final List<NativeStream> streams = new ArrayList<>();
    private final List<MemRef> states = new ArrayList<>();

    /**
     * Opens {@code devices} CPU devices with {@code streamsPerDevice} streams each, their kernels lowered by
     * {@code computeNice} as the daemon's are, and compiles the kernel: its IR (read as the daemon reads a
     * client's, {@code ir}) or its C.
     */
    TaskBenchPeak(int devices, int streamsPerDevice, boolean ir, int computeNice) {
        backend = new CpuBackend(dev.arrayd.devices.cpu.CpuOptions.defaults().withComputeNice(computeNice));
        try {
            module = backend.compiler().compile(ir
                    ? KernelSource.ir(dev.arrayd.server.IrCodec.module(dev.arrayd.proto.v1.IrModule.newBuilder()
                            .addKernels(ComputeKernel.ir().proto()).build(), "ir"))
                    : new KernelSource(Dialect.C, ComputeKernel.SOURCE, List.of(
                    new KernelSignature(ComputeKernel.NAME, List.of(
                            KernelParam.buffer("state", DType.F64, Access.READ_WRITE),
                            KernelParam.scalar("iterations", DType.I64))))));
            kernel = module.kernels().getFirst();
            List<Device> opened = backend.openDevices(devices);
            int pool = 1;
            long bytes = ComputeKernel.STATE_DOUBLES * Double.BYTES;
            for (Device d : opened) {
                for (int s = 0; s < streamsPerDevice; s++) {
                    // a slab per stream: no two streams' states share a cache line
                    d.allocPool(pool, bytes, 64);
                    MemRef ref = new MemRef(pool++, 0, bytes);
                    d.memsetZero(ref);
                    states.add(ref);
                    streams.add(d.newStream("taskbench-peak-" + s));
                }
            }
        } catch (RuntimeException e) {
            backend.close();
            throw e;
        }
    }

    int width() {
        return streams.size();
    }

    /**
     * Runs {@code tasksPerStream} tasks of {@code iterations} on every stream at once and returns the
     * elapsed nanoseconds.
     */
    long run(long iterations, int tasksPerStream) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(streams.size() * tasksPerStream);
        AtomicReference<ArraydException> failure = new AtomicReference<>();
        CommandCallback cb = new CommandCallback() {
            @Override
            public void completed(long deviceNanos) {
                done.countDown();
            }

            @Override
            public void failed(ArraydException cause) {
                failure.compareAndSet(null, cause);
                done.countDown();
            }
        };
        long t0 = System.nanoTime();
        for (int k = 0; k < tasksPerStream; k++) {
            for (int s = 0; s < streams.size(); s++) {
                streams.get(s).submit(new DeviceCommand.Launch(kernel, new long[] {1}, null, List.of(
                        new KernelArg.Buffer(states.get(s)), KernelArg.Scalar.i64(iterations))), cb);
            }
        }
        if (!done.await(5, TimeUnit.MINUTES)) {
            throw new IllegalStateException("peak run: tasks still running after 5 minutes");
        }
        long nanos = System.nanoTime() - t0;
        if (failure.get() != null) {
            throw failure.get();
        }
        return nanos;
    }

    /**
     * The peak FLOP/s: the best of {@code repeats} runs of long tasks lasting about {@code targetNanos}
     * each (calibrated with a first short run).
     */
    double peakFlops(long iterations, long targetNanos, int repeats) throws InterruptedException {
        long probe = run(iterations, 2);
        long perTask = Math.max(1, probe / 2);
        int tasks = (int) Math.clamp(targetNanos / perTask, 2, 100_000);
        double best = 0;
        for (int r = 0; r < repeats; r++) {
            long nanos = run(iterations, tasks);
            double flops = (double) ComputeKernel.flopsPerTask(iterations) * tasks * streams.size();
            best = Math.max(best, flops / (nanos / 1e9));
        }
        return best;
    }

    @Override
    public void close() {
        for (NativeStream s : streams) {
            s.close();
        }
        module.close();
        backend.close();
    }
}
