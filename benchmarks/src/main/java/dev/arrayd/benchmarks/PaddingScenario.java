package dev.arrayd.benchmarks;

import dev.arrayd.cli.DemoKernels;
import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.BufferOptions;
import dev.arrayd.client.DType;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Padding;
import dev.arrayd.client.Session;
import io.grpc.ManagedChannel;
import java.io.BufferedWriter;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench padding}: what padded buffers and views buy, through the daemon as a client uses them.
 *
 * <ol>
 *   <li><b>Stencil:</b> a 2-D 5-point stencil over a {@code --size}² f32 grid, as an IR kernel reading a padded
 *       buffer (a halo of one element holding the boundary value: no test per neighbour) against the same
 *       stencil on a plain buffer, whose kernel tests each neighbour's position ({@code select}). The launches
 *       alternate; the figure is the ratio of the median device times, and both outputs are checked equal.</li>
 *   <li><b>Reshape:</b> a view with new dims of a 1 MiB and a 1 GiB buffer ({@code --view-sizes}): the CreateView round trip (median)
 *       and the device memory in use before and after (a view allocates and moves nothing), against a reshape by
 *       copy into a new buffer of the same size.</li>
 * </ol>
 */
@Command(name = "padding", sortOptions = false,
        description = {"A 2-D 5-point stencil on a padded buffer against the same stencil with position tests on a"
                + " plain one (goal: padded >= 1.2x faster), and the cost of a view (reshape) at 1 MiB and 1 GiB"
                + " against a copy.",
                "Writes stencil.csv, reshape.csv and padding.png; the last line of stdout is: RESULT padding"
                        + " padded_ms=.. guarded_ms=.. speedup=.. small_MiB=.. large_MiB=.. view_small_us=.. view_large_us=.."
                        + " view_bytes_moved=.. copy_large_ms=..",
                "Defaults: --iterations " + PaddingScenario.DEFAULT_RUNS + " runs of each stencil, after --warmup "
                        + PaddingScenario.DEFAULT_WARMUP + " runs at least, then on until the JITs are quiet (at most"
                        + " --warmup-seconds)."})
final class PaddingScenario implements Scenario {

    static final int DEFAULT_RUNS = 31;
    static final int DEFAULT_WARMUP = 3;
    static final double GOAL = 1.2;
    static final int VIEWS = 200;

    @Mixin
    BenchOptions options = new BenchOptions();

    /** How the stencils' warm-up went (set by {@link #stencil}). */
    private JitWarmUp.Result warm;

    @Option(names = "--size", defaultValue = "4096", description = "Edge of the square grid (default: ${DEFAULT-VALUE}).")
    int size;

    @Option(names = "--view-sizes", paramLabel = "MIB", split = ",", defaultValue = "1,1024",
            description = "The two buffer sizes in MiB whose views are compared (default: ${DEFAULT-VALUE}).")
    long[] viewSizesMib;

    @Option(names = "--view-warmup", defaultValue = "3000",
            description = "Views made and destroyed before the measured ones (default: ${DEFAULT-VALUE}).")
    int viewWarmup;

    @Override
    public String name() {
        return "padding";
    }

    @Override
    public BenchOptions options() {
        return options;
    }

    @Override
    public Report run(BenchContext ctx) throws Exception {
        int runs = options.iterations(DEFAULT_RUNS);
        int warmup = options.warmup(DEFAULT_WARMUP);
        Progress progress = ctx.progress();
        ManagedChannel channel = Channels.open(ctx);
        try (ArraydClient c = ArraydClient.builder().channel(channel).build();
             Session s = c.openSession("bench-padding").get(30, TimeUnit.SECONDS)) {
            double[][] stencil = stencil(channel, s, progress, runs, warmup);
            double paddedMs = ThroughputScenario.median(stencil[0]);
            double guardedMs = ThroughputScenario.median(stencil[1]);
            double speedup = guardedMs / paddedMs;
            if (viewSizesMib.length != 2 || viewSizesMib[0] <= 0 || viewSizesMib[1] <= 0) {
                throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this), "--view-sizes: "
                        + Arrays.toString(viewSizesMib) + " (expected: two sizes in MiB, e.g. 1,1024)");
            }
            warmViews(s, progress);
            long[] sizes = {viewSizesMib[0] << 20, viewSizesMib[1] << 20};
            double[][] views = new double[sizes.length][];
            long[] moved = new long[sizes.length];
            double[] copyMs = new double[sizes.length];
            for (int i = 0; i < sizes.length; i++) {
                progress.update(String.format(Locale.ROOT, "padding: views of a %d MiB buffer", sizes[i] >> 20));
                views[i] = new double[VIEWS];
                moved[i] = reshape(c, s, sizes[i], views[i], copyMs, i);
            }
            progress.clear();
            try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("stencil.csv"))) {
                w.write("run,padded_ms,guarded_ms\n");
                for (int r = 0; r < runs; r++) {
                    w.write(String.format(Locale.ROOT, "%d,%.4f,%.4f%n", r + 1, stencil[0][r], stencil[1][r]));
                }
            }
            try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("reshape.csv"))) {
                w.write("bytes,view,create_view_us\n");
                for (int i = 0; i < sizes.length; i++) {
                    for (int v = 0; v < VIEWS; v++) {
                        w.write(String.format(Locale.ROOT, "%d,%d,%.1f%n", sizes[i], v + 1, views[i][v]));
                    }
                }
            }
            double view1 = ThroughputScenario.median(views[0]);
            double view2 = ThroughputScenario.median(views[1]);
            new BarChart(String.format(Locale.ROOT, "arrayd padded buffers: %d x %d f32 stencil, views (median)", size,
                    size), "relative to the plain buffer / the smaller view", List.of("stencil device time",
                    "view of the larger buffer"))
                    .add("plain buffer, position tests / view of " + mib(sizes[0]), List.of(1.0, 1.0))
                    .add("padded buffer / view of " + mib(sizes[1]), List.of(paddedMs / guardedMs, view2 / view1))
                    .writePng(ctx.outDir().resolve("padding.png"));
            long movedMax = Math.max(moved[0], moved[1]);
            String result = String.format(Locale.ROOT, "padded_ms=%.3f guarded_ms=%.3f speedup=%.3f small_MiB=%d large_MiB=%d"
                    + " view_small_us=%.1f view_large_us=%.1f view_bytes_moved=%d copy_large_ms=%.2f", paddedMs, guardedMs,
                    speedup, sizes[0] >> 20, sizes[1] >> 20, view1, view2, movedMax, copyMs[1]);
            List<String> lines = new ArrayList<>();
            lines.add(String.format(Locale.ROOT, "padding: %d x %d f32 5-point stencil, %d runs each, alternating", size,
                    size, runs));
            lines.add(String.format(Locale.ROOT, "  padded buffer (halo, no tests):  %8.3f ms device time (median)", paddedMs));
            lines.add(String.format(Locale.ROOT, "  plain buffer (position tests):   %8.3f ms device time (median), "
                    + "padded %.2fx faster (goal >= %.1f)", guardedMs, speedup, GOAL));
            lines.add(String.format(Locale.ROOT, "  view of %s: %.1f µs, of %s: %.1f µs (CreateView round trip, median of"
                    + " %d); device memory grown by %d bytes; reshape by copy: %.2f ms, %.2f ms", mib(sizes[0]), view1,
                    mib(sizes[1]), view2, VIEWS, movedMax, copyMs[0], copyMs[1]));
            lines.add("results: " + ctx.outDir());
            String section = String.format(Locale.ROOT, """
                    What is measured (%d runs of each, alternating, after a warm-up of at least %d runs of each that \
                    lasts until the JITs of the daemon and the benchmark are quiet (%s); device times from the \
                    launches' completions):

                    - **stencil:** a 2-D 5-point stencil, `out[y][x] = 0.2 × (in[y][x] + its four neighbours)`, over a \
                    %d × %d f32 grid whose outside holds 1.0. Padded: the IR kernel `DemoKernels.stencil` (the one \
                    `arrayd demo --kernel stencil` runs) reads a buffer created with a halo of one element \
                    (`Padding.halo(2, 1, 1.0)`), so no neighbour needs a test. Plain: `DemoKernels.stencilGuarded` \
                    reads an unpadded buffer and chooses each neighbour or the boundary value with a `select` on the \
                    work-item's position. Both outputs are compared element by element.
                    - **reshape:** `createView` of a %d-element-per-row regrouping of a %s and a %s f32 buffer, \
                    %d views each (the round trip of the unary call, after %d views made and destroyed to warm up both \
                    JITs), the daemon's device memory in use read before and after; and the same reshape by copy (a new \
                    buffer and a copy into it, to its completion).

                    | %d × %d stencil | device time (median) | ratio |
                    | --- | --- | --- |
                    | plain buffer, position tests | %.3f ms | 1.00 |
                    | padded buffer, halo | %.3f ms | **%.2f× faster** (goal ≥ %.1f) |

                    | reshape | %s | %s |
                    | --- | --- | --- |
                    | view (CreateView round trip, median) | %.1f µs | %.1f µs |
                    | device memory added by %d views | %d B | %d B |
                    | copy into a new buffer | %.2f ms | %.2f ms |

                    ![padding](padding.png)
                    """, runs, warmup, warm.describe(), size, size, 1024, mib(sizes[0]), mib(sizes[1]), VIEWS, viewWarmup, size, size, guardedMs,
                    paddedMs, speedup, GOAL, mib(sizes[0]), mib(sizes[1]), view1, view2,
                    VIEWS, moved[0], moved[1], copyMs[0], copyMs[1]);
            return new Report(lines, result, section);
        } finally {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    /** {@code 1 MiB}, {@code 1 GiB}. */
    static String mib(long bytes) {
        return bytes >= 1L << 30 && bytes % (1L << 30) == 0 ? (bytes >> 30) + " GiB" : (bytes >> 20) + " MiB";
    }

    /** Median-ready device times in ms: [0] padded, [1] plain with position tests; checks the outputs agree. */
    private double[][] stencil(ManagedChannel channel, Session s, Progress progress, int runs, int warmup)
            throws Exception {
        progress.update("padding: uploading a " + size + " x " + size + " grid twice");
        int n = size;
        float[] grid = new float[n * n];
        for (int i = 0; i < grid.length; i++) {
            grid[i] = (i % 97) * 0.125f;
        }
        BufferHandle padded = s.createBuffer(DType.F32, new long[] {n, n},
                BufferOptions.defaults().padding(Padding.halo(2, 1, 1f))).get(60, TimeUnit.SECONDS);
        BufferHandle plain = s.createBuffer(DType.F32, n, n).get(60, TimeUnit.SECONDS);
        BufferHandle outPadded = s.createBuffer(DType.F32, (long) n * n).get(60, TimeUnit.SECONDS);
        BufferHandle outPlain = s.createBuffer(DType.F32, (long) n * n).get(60, TimeUnit.SECONDS);
        s.write(padded, grid).future().get(120, TimeUnit.SECONDS);
        s.write(plain, grid).future().get(120, TimeUnit.SECONDS);
        progress.update("padding: compiling the two stencils");
        KernelHandle kp = s.compile(KernelModuleSpec.ir(DemoKernels.stencil())).get(120, TimeUnit.SECONDS).get("stencil");
        KernelHandle kg = s.compile(KernelModuleSpec.ir(DemoKernels.stencilGuarded())).get(120, TimeUnit.SECONDS)
                .get("stencil_guarded");
        Launch lp = Launch.of(kp).global(n, n).args(padded, outPadded);
        Launch lg = Launch.of(kg).global(n, n).args(plain, outPlain, (long) n, (long) n, 1f);
        warm = JitWarmUp.run(progress, "padding: stencils", List.of(channel), List.of(), warmup, options.warmupLimit(),
                () -> {
                    s.launch(lp).future().get(120, TimeUnit.SECONDS);
                    s.launch(lg).future().get(120, TimeUnit.SECONDS);
                });
        progress.line("padding: " + warm.describe());
        double[][] out = new double[2][runs];
        for (int r = 0; r < runs; r++) {
            progress.update(String.format(Locale.ROOT, "padding: stencil run %d of %d", r + 1, runs));
            out[0][r] = s.launch(lp).future().get(120, TimeUnit.SECONDS).deviceNanos() / 1e6;
            out[1][r] = s.launch(lg).future().get(120, TimeUnit.SECONDS).deviceNanos() / 1e6;
        }
        float[] a = s.readFloats(outPadded).get(120, TimeUnit.SECONDS);
        float[] b = s.readFloats(outPlain).get(120, TimeUnit.SECONDS);
        if (!Arrays.equals(a, b)) {
            throw new IllegalStateException("the padded and the plain stencil disagree");
        }
        for (BufferHandle h : List.of(padded, plain, outPadded, outPlain)) {
            s.destroy(h).get(30, TimeUnit.SECONDS);
        }
        return out;
    }

    /** Makes and destroys views so that the daemon's and this process's JITs have compiled the path (cold: ~2 ms a call). */
    private void warmViews(Session s, Progress progress) throws Exception {
        BufferHandle small = s.createBuffer(DType.F32, 1024).get(60, TimeUnit.SECONDS);
        for (int i = 0; i < viewWarmup; i++) {
            if (i % 500 == 0) {
                progress.update(String.format(Locale.ROOT, "padding: warming up views, %d of %d", i, viewWarmup));
            }
            s.destroy(s.createView(small, new long[] {32, 32}, false).get(30, TimeUnit.SECONDS)).get(30, TimeUnit.SECONDS);
        }
        s.destroy(small).get(30, TimeUnit.SECONDS);
    }

    /**
     * Views of a buffer of {@code bytes}: their round trips (µs) into {@code times}, the reshape-by-copy time (ms)
     * into {@code copyMs[i]}; returns how much the device memory in use grew while the views existed.
     */
    private static long reshape(ArraydClient c, Session s, long bytes, double[] times, double[] copyMs, int i)
            throws Exception {
        long elements = bytes / 4;
        BufferHandle base = s.createBuffer(DType.F32, elements).get(60, TimeUnit.SECONDS);
        s.fill(base, 1f).future().get(120, TimeUnit.SECONDS);
        long before = usedBytes(c);
        List<BufferHandle> views = new ArrayList<>();
        for (int v = 0; v < times.length; v++) {
            long t0 = System.nanoTime();
            views.add(s.createView(base, new long[] {elements / 1024, 1024}, false).get(30, TimeUnit.SECONDS));
            times[v] = (System.nanoTime() - t0) / 1e3;
        }
        long grown = usedBytes(c) - before;
        for (BufferHandle v : views) {
            s.destroy(v).get(30, TimeUnit.SECONDS);
        }
        long t0 = System.nanoTime();
        BufferHandle copy = s.createBuffer(DType.F32, elements / 1024, 1024).get(60, TimeUnit.SECONDS);
        s.copy(base, copy).future().get(120, TimeUnit.SECONDS);
        copyMs[i] = (System.nanoTime() - t0) / 1e6;
        s.destroy(copy).get(30, TimeUnit.SECONDS);
        s.destroy(base).get(30, TimeUnit.SECONDS);
        return grown;
    }

    /** Device memory in use on the daemon's first device. */
    private static long usedBytes(ArraydClient c) throws Exception {
        return c.devices().get(30, TimeUnit.SECONDS).getFirst().memoryUsedBytes();
    }
}
