package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.support.CommandFuture;
import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DType;
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
import dev.arrayd.devices.api.conformance.AbstractDeviceConformanceTest;
import dev.arrayd.devices.api.support.StreamWorker;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.IrSamples;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The CUDA benchmark, a main on the backend's test class path (it needs the backend's package-private
 * devices and the conformance suite's canned kernels); it prints a message and exits 0 where there is no GPU. Each figure is taken side by
 * side with its raw-JCuda anchor in the same process, alternating in rounds; medians are reported.
 *
 * <ul>
 *   <li><b>launch</b>: empty-kernel round trip vs raw {@code cuLaunchKernel} + {@code cuStreamSynchronize} on
 *       a stream of the same device, through an arrayd stream two ways: run on the calling thread
 *       ({@code tryRunInline}, what the scheduler does with a short ready launch) and queued to the stream's
 *       worker ({@code submit}, the caller parked on a future until the callback);</li>
 *   <li><b>transfer</b>: 256 MiB upload / download through arrayd's pinned staging (from / to ordinary
 *       off-heap memory) vs raw {@code cuMemcpyHtoD} / {@code cuMemcpyDtoH} from / to pinned memory
 *       (the goal: arrayd at 80% or more of raw), with the host memory split over several copy lanes and a
 *       sweep of lane counts and chunk sizes; and the same from memory page-locked by {@code lockHostMemory}
 *       (what the daemon does with a shared-memory region), which needs no staging;</li>
 *   <li><b>matmul</b>: a 16x16-tiled shared-memory SGEMM in CUDA C, n = 2048, GFLOP/s through arrayd; the same
 *       product as IR kernels, tiled in local memory ({@code IrSamples.tiledMatmul}, the goal: 30% of the native
 *       one) and one work-item per element ({@code IrSamples.matmul});</li>
 *   <li><b>guards</b>: an IR vadd of 64 Mi floats with every access proven in bounds vs the same with its three
 *       guards kept ({@code IrSamples.vaddProven} / {@code vaddGuarded}), device time.</li>
 * </ul>
 * The last line is {@code RESULT cuda device=".." launch_ratio=.. queued_launch_ratio=.. h2d_ratio=.. d2h_ratio=..
 * matmul_GFLOPs=..
 * ir_matmul_GFLOPs=.. ir_matmul_of_native=.. guards_ratio=.. launch_us=.. ...}.
 *
 * <p>The GPU check kit ({@code gpu-kit}) runs it on a GPU machine with nothing else installed.
 */
public final class CudaBench {

    private static final int ROUNDS = 5;
    private static final int LAUNCHES_PER_ROUND = 2000;
    private static final long TRANSFER_BYTES = 256L << 20;
    private static final int N = 2048;
    private static final int TILE = 16;
    /** Elements of the guards-forced vs proven vadd (3 x 256 MiB). */
    private static final long VADD_ELEMENTS = 64L << 20;

    private static final String MATMUL = """
            #define TILE 16
            extern "C" __global__ void matmul(const float *a, const float *b, float *c, int32_t n) {
                __shared__ float ta[TILE][TILE];
                __shared__ float tb[TILE][TILE];
                int row = blockIdx.y * TILE + threadIdx.y;
                int col = blockIdx.x * TILE + threadIdx.x;
                float acc = 0.0f;
                for (int t = 0; t < n; t += TILE) {
                    ta[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
                    tb[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
                    __syncthreads();
                    for (int k = 0; k < TILE; k++) acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
                    __syncthreads();
                }
                c[row * n + col] = acc;
            }
            """;

    private CudaBench() {}

    public static void main(String[] args) throws Exception {
        try (CudaBackend backend = new CudaBackend()) {
            Optional<String> reason = backend.unavailableReason();
            if (reason.isPresent()) {
                System.out.println("cuda benchmark skipped: no usable GPU here (" + reason.get() + ")");
                System.out.println("RESULT cuda skipped=1");
                return;
            }
            if (backend.nvrtcProblem().isPresent()) {
                System.out.println("cuda benchmark skipped: CUDA C needs NVRTC (" + backend.nvrtcProblem().get() + ")");
                System.out.println("RESULT cuda skipped=1");
                return;
            }
            CudaDevice device = backend.cudaDevices().isEmpty() ? (CudaDevice) backend.openDevices(1).getFirst()
                    : backend.cudaDevices().getFirst();
            System.out.println("device: " + device);
            run(backend, device);
        }
    }

    private static void run(CudaBackend backend, CudaDevice device) throws Exception {
        int[] driver = new int[1];
        JCudaDriver.cuDriverGetVersion(driver);
        System.out.println("driver API version " + driver[0]);
        NativeStream stream = device.newStream("bench");
        KernelModule empty = backend.compiler().compile(new KernelSource(Dialect.CUDA_C, CudaKernels.source("empty"),
                List.of(AbstractDeviceConformanceTest.cannedSignature("empty"))));
        Kernel emptyKernel = empty.kernels().getFirst();

        // raw anchor: the same function, its own stream, launch + synchronize
        device.makeCurrent();
        CUstream raw = new CUstream();
        CudaErrors.check(JCudaDriver.cuStreamCreate(raw, CudaEnqueuer.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        CUfunction emptyFn = ((CudaKernel) emptyKernel).function(device);
        Pointer noParams = null; // the empty kernel takes no parameters

        double[] arraydUs = new double[ROUNDS];
        double[] inlineUs = new double[ROUNDS];
        double[] rawUs = new double[ROUNDS];
        DeviceCommand.Launch launch = new DeviceCommand.Launch(emptyKernel, new long[] {1}, null, List.of());
        for (int warm = 0; warm < 200; warm++) {
            run(stream, launch);
            runInline(stream, launch);
            JCudaDriver.cuLaunchKernel(emptyFn, 1, 1, 1, 1, 1, 1, 0, raw, noParams, null);
            JCudaDriver.cuStreamSynchronize(raw);
        }
        for (int r = 0; r < ROUNDS; r++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < LAUNCHES_PER_ROUND; i++) {
                run(stream, launch);
            }
            long t1 = System.nanoTime();
            device.makeCurrent();
            for (int i = 0; i < LAUNCHES_PER_ROUND; i++) {
                CudaErrors.check(JCudaDriver.cuLaunchKernel(emptyFn, 1, 1, 1, 1, 1, 1, 0, raw, noParams, null), "raw launch");
                CudaErrors.check(JCudaDriver.cuStreamSynchronize(raw), "raw sync");
            }
            long t2 = System.nanoTime();
            for (int i = 0; i < LAUNCHES_PER_ROUND; i++) {
                runInline(stream, launch);
            }
            long t3 = System.nanoTime();
            arraydUs[r] = (t1 - t0) / 1e3 / LAUNCHES_PER_ROUND;
            rawUs[r] = (t2 - t1) / 1e3 / LAUNCHES_PER_ROUND;
            inlineUs[r] = (t3 - t2) / 1e3 / LAUNCHES_PER_ROUND;
        }
        double queuedUs = median(arraydUs);
        double launchUs = median(inlineUs);
        double rawLaunchUs = median(rawUs);
        System.out.printf("launch round trip: arrayd inline %.1f us, queued %.1f us, raw JCuda %.1f us (rounds %s / %s / %s)%n",
                launchUs, queuedUs, rawLaunchUs, Arrays.toString(inlineUs), Arrays.toString(arraydUs), Arrays.toString(rawUs));

        // transfers
        device.allocPool(1, TRANSFER_BYTES, 256);
        MemRef ref = new MemRef(1, 0, TRANSFER_BYTES);
        double[] up = new double[ROUNDS];
        double[] rawUp = new double[ROUNDS];
        double[] down = new double[ROUNDS];
        double[] rawDown = new double[ROUNDS];
        double[] lockedUp = new double[ROUNDS];
        double[] lockedDown = new double[ROUNDS];
        try (Arena arena = Arena.ofShared()) {
            MemorySegment host = arena.allocate(TRANSFER_BYTES, 4096);
            host.fill((byte) 7);
            device.makeCurrent();
            Pointer pinned = new Pointer();
            CudaErrors.check(JCudaDriver.cuMemAllocHost(pinned, TRANSFER_BYTES), "cuMemAllocHost");
            CudaSlab slab = device.slab(ref, "ref", -1);
            try {
                // warm: the copy lanes' threads started, the pinned staging allocated, the copy loops compiled
                run(stream, new DeviceCommand.Upload(host, ref));
                run(stream, new DeviceCommand.Download(ref, host));
                for (int r = 0; r < ROUNDS; r++) {
                    long t0 = System.nanoTime();
                    run(stream, new DeviceCommand.Upload(host, ref));
                    long t1 = System.nanoTime();
                    device.makeCurrent();
                    CudaErrors.check(JCudaDriver.cuMemcpyHtoD(slab.ptr(), pinned, TRANSFER_BYTES), "raw HtoD");
                    long t2 = System.nanoTime();
                    run(stream, new DeviceCommand.Download(ref, host));
                    long t3 = System.nanoTime();
                    device.makeCurrent();
                    CudaErrors.check(JCudaDriver.cuMemcpyDtoH(pinned, slab.ptr(), TRANSFER_BYTES), "raw DtoH");
                    long t4 = System.nanoTime();
                    up[r] = TRANSFER_BYTES / (double) (t1 - t0);
                    rawUp[r] = TRANSFER_BYTES / (double) (t2 - t1);
                    down[r] = TRANSFER_BYTES / (double) (t3 - t2);
                    rawDown[r] = TRANSFER_BYTES / (double) (t4 - t3);
                }
                // memory the daemon page-locks (a shared-memory region): one DMA, no staging
                Runnable unlock = backend.lockHostMemory(host);
                try {
                    upAndDown(stream, host, ref, lockedUp, lockedDown);
                } finally {
                    unlock.run();
                }
            } finally {
                JCudaDriver.cuMemFreeHost(pinned);
            }
        }
        device.freePool(1);
        System.out.printf("upload 256 MiB: arrayd %.2f GB/s, raw pinned %.2f GB/s; download: arrayd %.2f GB/s, raw pinned %.2f GB/s "
                + "(rounds %s / %s / %s / %s)%n", median(up), median(rawUp), median(down), median(rawDown), rounded(up),
                rounded(rawUp), rounded(down), rounded(rawDown));
        System.out.printf("upload 256 MiB from page-locked memory (lockHostMemory): arrayd %.2f GB/s; download into it: "
                + "arrayd %.2f GB/s%n", median(lockedUp), median(lockedDown));
        transferSweep();

        // tiled matmul
        KernelSignature sig = new KernelSignature("matmul", List.of(KernelParam.buffer("a", DType.F32, Access.READ),
                KernelParam.buffer("b", DType.F32, Access.READ), KernelParam.buffer("c", DType.F32, Access.WRITE),
                KernelParam.scalar("n", DType.I32)));
        KernelModule mm = backend.compiler().compile(new KernelSource(Dialect.CUDA_C, MATMUL, List.of(sig)));
        long matBytes = 4L * N * N;
        device.allocPool(2, 3 * matBytes, 256);
        MemRef a = new MemRef(2, 0, matBytes);
        MemRef b = new MemRef(2, matBytes, matBytes);
        MemRef c = new MemRef(2, 2 * matBytes, matBytes);
        double[] gflops = new double[ROUNDS];
        List<String> failures = new java.util.ArrayList<>();
        double[] irTiled = new double[ROUNDS];
        double[] irNaive = new double[ROUNDS];
        try (Arena arena = Arena.ofShared()) {
            MemorySegment ha = arena.allocate(matBytes, 64);
            for (long i = 0; i < (long) N * N; i++) {
                ha.setAtIndex(ValueLayout.JAVA_FLOAT, i, (i % 7) * 0.25f);
            }
            run(stream, new DeviceCommand.Upload(ha, a));
            run(stream, new DeviceCommand.Upload(ha, b));
            DeviceCommand.Launch mmLaunch = new DeviceCommand.Launch(mm.kernels().getFirst(), new long[] {N, N},
                    new long[] {TILE, TILE}, List.of(new KernelArg.Buffer(a), new KernelArg.Buffer(b), new KernelArg.Buffer(c),
                    KernelArg.Scalar.i32(N)));
            run(stream, mmLaunch);
            for (int r = 0; r < ROUNDS; r++) {
                long deviceNanos = run(stream, mmLaunch);
                gflops[r] = 2.0 * N * N * N / deviceNanos;
            }
            MemorySegment hc = arena.allocate(matBytes, 64);
            run(stream, new DeviceCommand.Download(c, hc));
            double expected = 0;
            for (int k = 0; k < N; k++) {
                expected += ((0L * N + k) % 7) * 0.25 * (((long) k * N) % 7) * 0.25;
            }
            System.out.printf("matmul %dx%d tiled %d: %.0f GFLOP/s (device time); c[0] = %.1f (expected %.1f)%n", N, N, TILE,
                    median(gflops), hc.getAtIndex(ValueLayout.JAVA_FLOAT, 0), expected);

            // the same product as IR kernels: tiled in local memory (guarded loads), and one item per element (proven)
            try {
                KernelModule irMm = backend.compiler().compile(KernelSource.ir(new IrModule(List.of(IrSamples.tiledMatmul(),
                        IrSamples.matmul()))));
                DeviceCommand.Launch tiled = new DeviceCommand.Launch(irMm.kernels().get(0), new long[] {N, N},
                        new long[] {TILE, TILE}, List.of(new KernelArg.Buffer(a), new KernelArg.Buffer(b), new KernelArg.Buffer(c),
                        KernelArg.Scalar.i32(N)));
                DeviceCommand.Launch naive = new DeviceCommand.Launch(irMm.kernels().get(1), new long[] {N, N},
                        new long[] {TILE, TILE}, List.of(new KernelArg.Buffer(a), new KernelArg.Buffer(b), new KernelArg.Buffer(c),
                        KernelArg.Scalar.i32(N), KernelArg.Scalar.i32(N), KernelArg.Scalar.i32(N)));
                run(stream, tiled);
                run(stream, naive);
                for (int r = 0; r < ROUNDS; r++) {
                    irTiled[r] = 2.0 * N * N * N / run(stream, tiled);
                    irNaive[r] = 2.0 * N * N * N / run(stream, naive);
                }
                run(stream, new DeviceCommand.Download(c, hc));
                System.out.printf("ir matmul %dx%d: tiled in local memory %.0f GFLOP/s (%.2f of the native tiled), one item per "
                        + "element %.0f GFLOP/s; c[0] = %.1f (expected %.1f)%n", N, N, median(irTiled),
                        median(irTiled) / median(gflops), median(irNaive), hc.getAtIndex(ValueLayout.JAVA_FLOAT, 0), expected);
                irMm.close();
            } catch (Exception e) {
                failures.add("ir matmul: " + e);
                System.out.println("ir matmul: FAILED: " + e);
                e.printStackTrace(System.out);
            }
        }
        device.freePool(2);

        // guards: the same vadd with every access proven in bounds, and with its three guards kept
        double guardRatio = 0;
        try {
            KernelModule vadds = backend.compiler().compile(KernelSource.ir(new IrModule(List.of(IrSamples.vaddProven(),
                    IrSamples.vaddGuarded()))));
            long vn = VADD_ELEMENTS;
            device.allocPool(3, 3 * 4 * vn, 256);
            List<KernelArg> vargs = List.of(new KernelArg.Buffer(new MemRef(3, 0, 4 * vn)),
                    new KernelArg.Buffer(new MemRef(3, 4 * vn, 4 * vn)), new KernelArg.Buffer(new MemRef(3, 8 * vn, 4 * vn)),
                    KernelArg.Scalar.i64(vn), KernelArg.Scalar.i64(vn));
            DeviceCommand.Launch proven = new DeviceCommand.Launch(vadds.kernels().get(0), new long[] {vn}, null, vargs);
            DeviceCommand.Launch guarded = new DeviceCommand.Launch(vadds.kernels().get(1), new long[] {vn}, null, vargs);
            run(stream, proven);
            run(stream, guarded);
            double[] provenUs = new double[ROUNDS];
            double[] guardedUs = new double[ROUNDS];
            for (int r = 0; r < ROUNDS; r++) {
                provenUs[r] = run(stream, proven) / 1e3;
                guardedUs[r] = run(stream, guarded) / 1e3;
            }
            device.freePool(3);
            vadds.close();
            guardRatio = median(guardedUs) / median(provenUs);
            System.out.printf("guards: vadd of %d floats %.1f us proven, %.1f us guarded (ratio %.2f; device time)%n", vn,
                    median(provenUs), median(guardedUs), guardRatio);
        } catch (Exception e) {
            failures.add("guards: " + e);
            System.out.println("guards: FAILED: " + e);
            e.printStackTrace(System.out);
        }
        mm.close();
        empty.close();
        device.makeCurrent();
        JCudaDriver.cuStreamDestroy(raw);
        stream.close();
        System.out.printf("RESULT cuda device=\"%s\" launch_ratio=%.2f queued_launch_ratio=%.2f h2d_ratio=%.2f d2h_ratio=%.2f matmul_GFLOPs=%.0f "
                        + "ir_matmul_GFLOPs=%.0f ir_matmul_of_native=%.2f guards_ratio=%.2f launch_us=%.1f raw_launch_us=%.1f "
                        + "upload_GBps=%.2f raw_upload_GBps=%.2f download_GBps=%.2f raw_download_GBps=%.2f "
                        + "locked_upload_GBps=%.2f locked_download_GBps=%.2f locked_h2d_ratio=%.2f locked_d2h_ratio=%.2f%n",
                device.info().name(), launchUs / rawLaunchUs, queuedUs / rawLaunchUs, median(up) / median(rawUp), median(down) / median(rawDown),
                median(gflops), median(irTiled), median(irTiled) / median(gflops), guardRatio, launchUs, rawLaunchUs,
                median(up), median(rawUp), median(down), median(rawDown), median(lockedUp), median(lockedDown),
                median(lockedUp) / median(rawUp),
                median(lockedDown) / median(rawDown));
        if (!failures.isEmpty()) {
            throw new IllegalStateException("the CUDA benchmark ran with failures: " + failures);
        }
    }

    private static long run(NativeStream stream, DeviceCommand command) throws Exception {
        CommandFuture done = new CommandFuture();
        stream.submit(command, done);
        return done.get(60, TimeUnit.SECONDS);
    }

    /** Copy lanes x staging chunk (MiB) tried by {@link #transferSweep}. */
    private static final int[][] SWEEP = {{1, 4}, {2, 4}, {4, 4}, {8, 4}, {12, 4}, {8, 2}, {8, 8}};

    /**
     * How staged transfers scale with copy lanes and chunk size: the same 256 MiB upload and download through a
     * backend of each setting (staging: two buffers per lane, doubled), medians of three.
     */
    private static void transferSweep() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment host = arena.allocate(TRANSFER_BYTES, 4096);
            host.fill((byte) 9);
            for (int[] setting : SWEEP) {
                int lanes = Math.min(setting[0], Runtime.getRuntime().availableProcessors());
                long chunk = (long) setting[1] << 20;
                try (CudaBackend b = new CudaBackend(CudaOptions.defaults().withCopyLanes(lanes).withStaging(chunk, 4 * lanes))) {
                    CudaDevice d = (CudaDevice) b.openDevices(1).getFirst();
                    NativeStream s = d.newStream("sweep");
                    d.allocPool(1, TRANSFER_BYTES, 256);
                    MemRef ref = new MemRef(1, 0, TRANSFER_BYTES);
                    double[] up = new double[5];
                    double[] down = new double[5];
                    run(s, new DeviceCommand.Upload(host, ref));
                    upAndDown(s, host, ref, up, down);
                    s.close();
                    System.out.printf("transfer sweep: lanes %d, chunk %d MiB: upload %.2f GB/s, download %.2f GB/s%n", lanes,
                            setting[1], median(up), median(down));
                }
            }
        }
    }

    /** {@code up.length} rounds of an upload of {@code host} into {@code ref} and a download back; GB/s of each. */
    private static void upAndDown(NativeStream stream, MemorySegment host, MemRef ref, double[] up, double[] down)
            throws Exception {
        for (int r = 0; r < up.length; r++) {
            long t0 = System.nanoTime();
            run(stream, new DeviceCommand.Upload(host, ref));
            long t1 = System.nanoTime();
            run(stream, new DeviceCommand.Download(ref, host));
            long t2 = System.nanoTime();
            up[r] = TRANSFER_BYTES / (double) (t1 - t0);
            down[r] = TRANSFER_BYTES / (double) (t2 - t1);
        }
    }

    /** Runs {@code command} on this thread (the scheduler's path for a short ready command); fails if declined. */
    private static void runInline(NativeStream stream, DeviceCommand command) {
        ArraydException[] failure = {null};
        boolean ran = stream.tryRunInline(command, new CommandCallback() {
            @Override
            public void completed(long deviceNanos) {
            }

            @Override
            public void failed(ArraydException cause) {
                failure[0] = cause;
            }
        });
        if (!ran) {
            throw new IllegalStateException("tryRunInline declined " + StreamWorker.describe(command));
        }
        if (failure[0] != null) {
            throw failure[0];
        }
    }

    private static String rounded(double[] values) {
        return Arrays.stream(values).mapToObj(v -> String.format("%.1f", v)).toList().toString();
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
