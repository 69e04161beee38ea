package dev.arrayd.cli;

import dev.arrayd.client.Access;
import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.DType;
import dev.arrayd.client.Dialect;
import dev.arrayd.client.EventResult;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.KernelSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code arrayd demo [--kernel NAME]}: uploads inputs, compiles one of the example kernels of
 * docs/kernels.md (IR, so the daemon needs no {@code --allow-native-source}), launches it, reads the
 * result back, checks it against the same computation in plain Java and prints the time each step
 * took. {@code --native} runs the C version of vadd instead (needs {@code --allow-native-source}).
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Run an example client on a running daemon: --kernel vadd (default), saxpy, sum, matmul,"
                + " matmul_blocked, matmul_tiles, softmax or stencil (a 2-D 5-point stencil on a padded buffer)"
                + " (portable IR kernels; no --allow-native-source needed), --native for the C vadd, or"
                + " --scenario multi-device for a gradient merged across two devices.")
final class DemoCommand implements Callable<Integer> {

    static final String VADD_SOURCE = """
            ARRAYD_KERNEL void vadd(ARRAYD_ITEM, const float *a, const float *b, float *c, int32_t n) {
                int64_t i = arrayd_global_id(0);
                if (i < n) c[i] = a[i] + b[i];
            }
            """;

    @Mixin
    ClientOptions client;

    @Option(names = "--kernel", description = "vadd, saxpy, sum, matmul, matmul_blocked, matmul_tiles, softmax or stencil (default:"
            + " ${DEFAULT-VALUE}).",
            defaultValue = "vadd")
    String kernel;

    @Option(names = "--native", description = "Run the C source version of vadd (the daemon needs --allow-native-source).")
    boolean nativeSource;

    @Option(names = "--n", description = "Elements of vadd, saxpy and sum (default: ${DEFAULT-VALUE}).", defaultValue = "1048576")
    int n;

    @Option(names = "--size", description = "matmul: the edge of the square matrices (a multiple of 16); matmul_blocked:"
            + " the same (a multiple of 64); matmul_tiles: the same (a multiple of 32); softmax: rows and columns; stencil: the edge of the square grid (default:"
            + " ${DEFAULT-VALUE}).", defaultValue = "256")
    int size;

    @Option(names = "--device", description = "Device to run on (default: the daemon's first device).", defaultValue = "")
    String device;

    @Option(names = "--scenario", description = "single (default: one kernel, see --kernel) or multi-device (a"
            + " data-parallel gradient merged across the daemon's first two devices, e.g. `serve --devices cpu:2`).",
            defaultValue = "single")
    String scenario;

    /** Wall-clock marks of one demo run. */
    private final class Steps {
        final long t0 = System.nanoTime();
        long session;
        long upload;
        long compile;
        long launch;
        long read;
        long deviceNanos;

        void print() {
            System.out.printf(Locale.ROOT, "timings: connect+session %.1f ms, upload %.1f ms, compile %.1f ms, launch %.3f ms"
                    + " (device %.3f ms), read back %.1f ms%n", ms(session - t0), ms(upload - session), ms(compile - upload),
                    ms(launch - compile), deviceNanos / 1e6, ms(read - launch));
        }
    }

    @Override
    public Integer call() throws Exception {
        if (n <= 0) {
            System.err.println("arrayd demo: --n " + n + " (expected: > 0)");
            return 2;
        }
        if (!scenario.equals("single") && !scenario.equals("multi-device")) {
            System.err.println("arrayd demo: --scenario " + scenario + " (expected: single or multi-device)");
            return 2;
        }
        if (scenario.equals("multi-device")) {
            try (ArraydClient c = client.connect(); Session s = c.openSession("arrayd-demo").get(30, TimeUnit.SECONDS)) {
                return MultiDeviceDemo.run(s, c.devices().get(30, TimeUnit.SECONDS), n) ? 0 : 1;
            } catch (ExecutionException e) {
                return Failures.report("demo", client.target, e.getCause());
            } catch (io.grpc.StatusRuntimeException e) {
                return Failures.report("demo", client.target, e);
            }
        }
        if (!DemoKernels.NAMES.contains(kernel) || (nativeSource && !kernel.equals("vadd"))) {
            System.err.println("arrayd demo: --kernel " + kernel + " (expected: one of " + DemoKernels.NAMES
                    + (nativeSource ? "; --native has vadd only" : "") + ")");
            return 2;
        }
        int multiple = switch (kernel) {
            case "matmul_blocked" -> DemoKernels.BLOCK_COLS;
            case "matmul_tiles" -> DemoKernels.TILES_EDGE;
            case "matmul" -> DemoKernels.TILE;
            default -> 1;
        };
        if (size <= 0 || size % multiple != 0) {
            System.err.println("arrayd demo: --size " + size + " (expected: > 0" + (multiple > 1
                    ? ", a multiple of " + multiple + " for " + kernel : "") + ")");
            return 2;
        }
        Steps t = new Steps();
        regions = Target.parse(client.target).isUnix();
        try (ArraydClient c = client.connect(); Session s = c.openSession("arrayd-demo").get(30, TimeUnit.SECONDS)) {
            t.session = System.nanoTime();
            if (regions) {
                System.out.println("over the daemon's Unix socket: arrays travel through shared-memory regions");
            }
            boolean ok = switch (kernel) {
                case "saxpy" -> saxpy(s, t);
                case "sum" -> sum(s, t);
                case "matmul", "matmul_blocked", "matmul_tiles" -> matmul(s, t, kernel);
                case "softmax" -> softmax(s, t);
                case "stencil" -> stencil(s, t);
                default -> vadd(s, t);
            };
            t.print();
            return ok ? 0 : 1;
        } catch (ExecutionException e) {
            if (io.grpc.Status.fromThrowable(e.getCause()).getCode() == io.grpc.Status.Code.PERMISSION_DENIED) {
                System.err.println("arrayd demo: the daemon at " + client.target + " refuses native kernel source, and"
                        + " --native runs C source. Start the daemon with `bin/arrayd serve --allow-native-source`, or"
                        + " leave out --native: the IR kernels need no native source (see README).");
                return 1;
            }
            return Failures.report("demo", client.target, e.getCause());
        } catch (io.grpc.StatusRuntimeException e) {
            return Failures.report("demo", client.target, e);
        }
    }

    /** Whether the daemon is reached over its Unix socket: then arrays go through shared-memory regions. */
    private boolean regions;

    private BufferHandle upload(Session s, float[] values) throws Exception {
        var opts = dev.arrayd.client.BufferOptions.defaults().device(device);
        BufferHandle b = s.createBuffer(DType.F32, new long[] {values.length}, opts).get(30, TimeUnit.SECONDS);
        if (regions) {
            try (dev.arrayd.client.MappedRegion r = s.createRegion(4L * values.length).get(30, TimeUnit.SECONDS)) {
                r.put(0, values);
                s.upload(b, 0, r, 0, 4L * values.length, dev.arrayd.client.CommandOptions.defaults()).future()
                        .get(60, TimeUnit.SECONDS);
            }
        } else {
            s.write(b, values).future().get(60, TimeUnit.SECONDS);
        }
        return b;
    }

    private float[] readBack(Session s, BufferHandle out) throws Exception {
        if (!regions) {
            return s.readFloats(out).get(60, TimeUnit.SECONDS);
        }
        long bytes = out.sizeBytes();
        try (dev.arrayd.client.MappedRegion r = s.createRegion(bytes).get(30, TimeUnit.SECONDS)) {
            s.download(out, 0, 0, r, 0, dev.arrayd.client.CommandOptions.defaults()).future().get(60, TimeUnit.SECONDS);
            float[] result = new float[(int) (bytes / 4)];
            r.get(0, result);
            return result;
        }
    }

    private BufferHandle output(Session s, long elements) throws Exception {
        var opts = dev.arrayd.client.BufferOptions.defaults().device(device);
        return s.createBuffer(DType.F32, new long[] {elements}, opts).get(30, TimeUnit.SECONDS);
    }

    private KernelHandle compile(Session s, KernelModuleSpec spec, String name, Steps t) throws Exception {
        t.upload = System.nanoTime();
        KernelHandle k = s.compile(spec).get(120, TimeUnit.SECONDS).get(name);
        t.compile = System.nanoTime();
        return k;
    }

    private float[] launchAndRead(Session s, Launch launch, BufferHandle out, Steps t) throws Exception {
        EventResult done = s.launch(launch).future().get(120, TimeUnit.SECONDS);
        t.launch = System.nanoTime();
        t.deviceNanos = done.deviceNanos();
        float[] result = readBack(s, out);
        t.read = System.nanoTime();
        return result;
    }

    /** Counts elements farther than {@code tolerance} (relative, at least absolute 1e-6) from the plain Java result. */
    private static boolean check(String what, float[] got, float[] want, double tolerance) {
        int bad = 0;
        int first = -1;
        for (int i = 0; i < want.length; i++) {
            double err = Math.abs((double) got[i] - want[i]);
            if (!(err <= tolerance * Math.max(1e-6, Math.abs(want[i])))) {
                if (bad++ == 0) {
                    first = i;
                }
            }
        }
        if (bad != 0) {
            System.out.printf(Locale.ROOT, "FAILED: %d of %d elements of %s wrong, first at %d: %s (expected %s)%n", bad,
                    want.length, what, first, got[first], want[first]);
            return false;
        }
        System.out.println("OK: all " + want.length + " elements of " + what + " match plain Java"
                + (tolerance == 0 ? " exactly" : " (relative error <= " + tolerance + ")"));
        return true;
    }

    private boolean vadd(Session s, Steps t) throws Exception {
        float[] a = new float[n];
        float[] b = new float[n];
        float[] want = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = i * 0.5f;
            b[i] = 1000f - i;
            want[i] = a[i] + b[i];
        }
        BufferHandle ba = upload(s, a);
        BufferHandle bb = upload(s, b);
        BufferHandle bc = output(s, n);
        KernelModuleSpec spec = nativeSource
                ? KernelModuleSpec.of(Dialect.C, VADD_SOURCE, KernelSpec.entry("vadd").buffer("a", DType.F32, Access.READ)
                        .buffer("b", DType.F32, Access.READ).buffer("c", DType.F32, Access.WRITE).scalar("n", DType.I32))
                : KernelModuleSpec.ir(DemoKernels.vadd());
        KernelHandle k = compile(s, spec, "vadd", t);
        Object count = nativeSource ? (Object) n : (Object) (long) n;
        float[] out = launchAndRead(s, Launch.of(k).global(n).args(ba, bb, bc, count), bc, t);
        System.out.printf(Locale.ROOT, "vadd (%s) of %d f32 elements on %s%n", nativeSource ? "C source" : "IR", n, bc.device());
        System.out.printf(Locale.ROOT, "  c[0] = %.1f + %.1f = %.1f%n", a[0], b[0], out[0]);
        System.out.printf(Locale.ROOT, "  c[%d] = %.1f + %.1f = %.1f%n", n - 1, a[n - 1], b[n - 1], out[n - 1]);
        return check("c", out, want, 0);
    }

    /**
     * A 2-D 5-point stencil on a padded buffer: a size x size grid with a halo of one element holding the boundary
     * value 1, written as a plain interior (the daemon places it inside the halo), read back and checked against
     * plain Java.
     */
    private boolean stencil(Session s, Steps t) throws Exception {
        int w = size;
        int h = size;
        float edge = 1f;
        float[] grid = new float[w * h];
        for (int i = 0; i < grid.length; i++) {
            grid[i] = (i % 97) * 0.125f;
        }
        var padded = dev.arrayd.client.BufferOptions.defaults().device(device)
                .padding(dev.arrayd.client.Padding.halo(2, 1, edge));
        BufferHandle in = s.createBuffer(DType.F32, new long[] {h, w}, padded).get(30, TimeUnit.SECONDS);
        s.write(in, grid).future().get(60, TimeUnit.SECONDS); // the interior; the halo keeps its value
        BufferHandle out = output(s, (long) w * h);
        KernelHandle k = compile(s, KernelModuleSpec.ir(DemoKernels.stencil()), "stencil", t);
        float[] got = launchAndRead(s, Launch.of(k).global(w, h).args(in, out), out, t);
        float[] want = new float[w * h];
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                float c = grid[y * w + x];
                float l = x > 0 ? grid[y * w + x - 1] : edge;
                float r = x < w - 1 ? grid[y * w + x + 1] : edge;
                float u = y > 0 ? grid[(y - 1) * w + x] : edge;
                float d = y < h - 1 ? grid[(y + 1) * w + x] : edge;
                want[y * w + x] = 0.2f * ((((c + l) + r) + u) + d);
            }
        }
        System.out.printf(Locale.ROOT, "stencil on a padded %d x %d f32 buffer (%d x %d in memory, halo = %.1f) on %s%n",
                h, w, h + 2, w + 2, edge, out.device());
        return check("out", got, want, 0);
    }

    private boolean saxpy(Session s, Steps t) throws Exception {
        float alpha = 2.5f;
        float[] x = new float[n];
        float[] y = new float[n];
        float[] want = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (i % 1000) * 0.25f;
            y[i] = 3f - (i % 7);
            want[i] = alpha * x[i] + y[i];
        }
        BufferHandle bx = upload(s, x);
        BufferHandle by = upload(s, y);
        KernelHandle k = compile(s, KernelModuleSpec.ir(DemoKernels.saxpy()), "saxpy", t);
        float[] out = launchAndRead(s, Launch.of(k).global(n).args(alpha, bx, by, (long) n), by, t);
        System.out.printf(Locale.ROOT, "saxpy y = %.1f * x + y of %d f32 elements on %s; y[1] = %.2f%n", alpha, n,
                by.device(), out[Math.min(1, n - 1)]);
        return check("y", out, want, 0);
    }

    private boolean sum(Session s, Steps t) throws Exception {
        int group = DemoKernels.SUM_GROUP;
        long groups = (n + group - 1) / group;
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (i % 100) * 0.01f;
        }
        BufferHandle bx = upload(s, x);
        BufferHandle partial = output(s, groups);
        KernelHandle k = compile(s, KernelModuleSpec.ir(DemoKernels.sum()), "sum", t);
        float[] parts = launchAndRead(s, Launch.of(k).global(groups * group).args(bx, partial, (long) n), partial, t);
        float[] want = new float[(int) groups];
        double total = 0;
        double wantTotal = 0;
        for (int g = 0; g < groups; g++) {
            // the same tree as the kernel: pairs at distance 128, 64, ... 1, in f32
            float[] tile = new float[group];
            for (int l = 0; l < group; l++) {
                long i = (long) g * group + l;
                tile[l] = i < n ? x[(int) i] : 0f;
            }
            for (int stride = group / 2; stride > 0; stride /= 2) {
                for (int l = 0; l < stride; l++) {
                    tile[l] += tile[l + stride];
                }
            }
            want[g] = tile[0];
            total += parts[g];
            wantTotal += want[g];
        }
        System.out.printf(Locale.ROOT, "sum of %d f32 elements on %s: %d work-groups of %d reduce in local memory with"
                + " barriers; total %.3f (plain Java %.3f)%n", n, bx.device(), groups, group, total, wantTotal);
        return check("the partial sums", parts, want, 0);
    }

    private boolean matmul(Session s, Steps t, String name) throws Exception {
        int m = size;
        float[] a = new float[m * m];
        float[] b = new float[m * m];
        for (int i = 0; i < a.length; i++) {
            a[i] = (i % 13) * 0.125f - 0.75f;
            b[i] = (i % 7) * 0.25f - 0.5f;
        }
        BufferHandle ba = upload(s, a);
        BufferHandle bb = upload(s, b);
        BufferHandle bc = output(s, (long) m * m);
        KernelHandle k = compile(s, KernelModuleSpec.ir(switch (name) {
            case "matmul_blocked" -> DemoKernels.matmulBlocked();
            case "matmul_tiles" -> DemoKernels.matmulTiles();
            default -> DemoKernels.matmul();
        }), name, t);
        long gx = switch (name) {
            case "matmul_blocked" -> m / DemoKernels.BLOCK_ROWS;
            case "matmul_tiles" -> m / DemoKernels.TILES_BLOCK;
            default -> m;
        };
        long gy = switch (name) {
            case "matmul_blocked" -> m / DemoKernels.BLOCK_COLS;
            case "matmul_tiles" -> m / DemoKernels.TILES_BLOCK;
            default -> m;
        };
        float[] out = launchAndRead(s, Launch.of(k).global(gx, gy).args(ba, bb, bc, m, m, m), bc, t);
        float[] want = new float[m * m];
        for (int row = 0; row < m; row++) {
            for (int col = 0; col < m; col++) {
                float acc = 0;
                for (int e = 0; e < m; e++) {
                    acc += a[row * m + e] * b[e * m + col];
                }
                want[row * m + col] = acc;
            }
        }
        String how = switch (name) {
            case "matmul_blocked" -> "in " + DemoKernels.BLOCK_ROWS + "x" + DemoKernels.BLOCK_COLS + " blocks in registers";
            case "matmul_tiles" -> "in " + DemoKernels.TILES_EDGE + "x" + DemoKernels.TILES_EDGE + " tiles through local memory, "
                    + DemoKernels.TILES_BLOCK + "x" + DemoKernels.TILES_BLOCK + " blocks in registers";
            default -> "in " + DemoKernels.TILE + "x" + DemoKernels.TILE + " tiles through local memory";
        };
        System.out.printf(Locale.ROOT, "matmul %dx%d f32 %s on %s: %.2f GFLOP/s on the device%n", m, m, how, bc.device(),
                2.0 * m * m * m / Math.max(1, t.deviceNanos));
        return check("c", out, want, 1e-5);
    }

    private boolean softmax(Session s, Steps t) throws Exception {
        int rows = size;
        int cols = size;
        float[] x = new float[rows * cols];
        for (int i = 0; i < x.length; i++) {
            x[i] = ((i * 37) % 101) * 0.1f - 5f;
        }
        BufferHandle bx = upload(s, x);
        BufferHandle by = output(s, (long) rows * cols);
        KernelHandle k = compile(s, KernelModuleSpec.ir(DemoKernels.softmax()), "softmax", t);
        float[] out = launchAndRead(s, Launch.of(k).global(rows).args(bx, by, (long) rows, (long) cols), by, t);
        float[] want = new float[x.length];
        for (int r = 0; r < rows; r++) {
            double max = Double.NEGATIVE_INFINITY;
            for (int j = 0; j < cols; j++) {
                max = Math.max(max, x[r * cols + j]);
            }
            double total = 0;
            for (int j = 0; j < cols; j++) {
                total += Math.exp(x[r * cols + j] - max);
            }
            for (int j = 0; j < cols; j++) {
                want[r * cols + j] = (float) (Math.exp(x[r * cols + j] - max) / total);
            }
        }
        System.out.printf(Locale.ROOT, "softmax of %d rows x %d f32 on %s; row 0 sums to %.6f%n", rows, cols, by.device(),
                sumRow(out, cols));
        return check("y", out, want, 1e-4);
    }

    private static double sumRow(float[] y, int cols) {
        double total = 0;
        for (int j = 0; j < cols; j++) {
            total += y[j];
        }
        return total;
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
