package dev.arrayd.benchmarks;

import dev.arrayd.cli.DemoKernels;
import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.ir.Expr;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.IrParam;
import dev.arrayd.devices.api.ir.IrType;
import dev.arrayd.devices.api.ir.Stmt;
import dev.arrayd.devices.cpu.CpuBackend;
import dev.arrayd.devices.cpu.CpuOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code bench ir}: the portable IR on the CPU backend, in this process (no daemon in the measured
 * path: these are properties of the compiler and of the generated code). In one run: compile-cache hit
 * latency (memory; disk: median of fresh backends over one directory), gcc time per kernel and per batch
 * of 10 modules (one gcc run), vadd bandwidth as a fraction of memcpy measured in the same run, the tiled
 * (local memory) and the register-blocked matmuls 512 x 512 f32 GFLOP/s against the machine's fp32 FMA
 * peak (computed: cores x MHz from /proc/cpuinfo x fp32 lanes (16 with AVX-512, 8 with AVX2) x 2 flops
 * per FMA x 2 FMA units), and each kernel with every guard forced on
 * ({@link CpuOptions#forceGuards()}) against the proven-away build. Device times are medians.
 */
@Command(name = "ir", description = {"The portable IR on the CPU backend, in-process: compile cache hit latency, gcc time"
        + " per kernel and per batch of 10, vadd bandwidth vs memcpy (floor 0.7), tiled and register-blocked matmuls 512x512"
        + " GFLOP/s vs the fp32 FMA peak, and each kernel with guards forced on vs proven away.",
        "Last line: RESULT ir cache_hit_us=.. cache_disk_hit_ms=.. gcc_kernel_ms=.. gcc_blocked_ms=.. gcc_batch10_ms=.."
                + " vadd_GBps=.. memcpy_GBps=.. vadd_memcpy_ratio=.. matmul_GFLOPs=.. peak_GFLOPs=.. matmul_peak_fraction=.."
                + " matmul_blocked_GFLOPs=.. matmul_blocked_peak_fraction=.. matmul_blocked_relaxed_GFLOPs=.. matmul_tiles_GFLOPs=.."
                + " matmul_lanes_GFLOPs=.. matmul_lanes_peak_fraction=.. matmul_best_peak_fraction=.. <kernel>_guard_slowdown=.."})
final class IrScenario implements Scenario {

    static final double VADD_FLOOR = 0.7;
    /** Alternating runs of each kernel, proven and guards forced: enough for a median steady within the VM's noise. */
    static final int RUNS = 41;
    /** Fresh backends over the compile cache's directory, one disk hit each (median reported). */
    static final int DISK_RESTARTS = 9;

    @Mixin
    BenchOptions options = new BenchOptions();

    @Override
    public String name() {
        return "ir";
    }

    @Override
    public BenchOptions options() {
        return options;
    }

    @Override
    public boolean usesDaemon() {
        return false;
    }

    @Override
    public Report run(BenchContext ctx) throws Exception {
        List<String> lines = new ArrayList<>();
        StringBuilder result = new StringBuilder();
        StringBuilder table = new StringBuilder();
        List<String> names = new ArrayList<>();
        List<Double> slowdowns = new ArrayList<>();
        Path cache = Files.createTempDirectory("arrayd-bench-ir-cache-");
        Path guardCache = Files.createTempDirectory("arrayd-bench-ir-guards-");
        try (CpuBackend cpu = new CpuBackend(CpuOptions.defaults().withCacheDir(cache));
             CpuBackend guarded = new CpuBackend(CpuOptions.defaults().withCacheDir(guardCache).withForceGuards(true))) {
            if (cpu.unavailableReason().isPresent()) {
                throw new IllegalStateException("cpu backend unavailable: " + cpu.unavailableReason().get());
            }
            ctx.progress().update("ir: compiling");
            // gcc per kernel (misses), then memory hits, then disk hits from fresh backends
            List<IrKernel> kernels = List.of(vadd(), saxpy(), sum(), matmul(), matmulBlocked(false), matmulBlocked(true),
                    matmulLanes(), matmulTiles(), softmax());
            double gccTotal = 0;
            int small = 0;
            double gccBlocked = 0; // the strict blocked matmul: 256 unrolled sums, gcc's slowest
            List<KernelModule> modules = new ArrayList<>();
            for (IrKernel k : kernels) {
                long t0 = System.nanoTime();
                modules.add(cpu.compiler().compile(KernelSource.ir(new IrModule(List.of(k)))));
                double ms = (System.nanoTime() - t0) / 1e6;
                if (k.name().startsWith("matmul_blocked") || k.name().equals("matmul_lanes")) {
                    gccBlocked = k.name().equals("matmul_blocked") ? ms : gccBlocked;
                } else {
                    gccTotal += ms;
                    small++;
                }
            }
            double gccPerKernel = gccTotal / small;
            long[] hits = new long[2000];
            for (int i = 0; i < hits.length; i++) {
                // a new source each time, equal to the cached one (as a daemon decodes each request anew), made untimed
                KernelSource again = KernelSource.ir(new IrModule(List.of(vadd())));
                long t0 = System.nanoTime();
                cpu.compiler().compile(again).close();
                hits[i] = System.nanoTime() - t0;
            }
            double hitUs = DirectCommands.median(hits) / 1e3;
            // disk hits: each from a fresh backend over the same directory (a daemon restarted), the first one the
            // first this JVM runs through that path
            long[] disk = new long[DISK_RESTARTS];
            for (int r = 0; r < disk.length; r++) {
                try (CpuBackend restarted = new CpuBackend(CpuOptions.defaults().withCacheDir(cache))) {
                    restarted.unavailableReason(); // the probe a daemon runs when it starts, not part of a hit
                    long t0 = System.nanoTime();
                    restarted.compiler().compile(KernelSource.ir(new IrModule(List.of(matmul())))).close();
                    disk[r] = System.nanoTime() - t0;
                }
            }
            double diskFirstMs = disk[0] / 1e6;
            double diskMs = DirectCommands.median(disk) / 1e6;
            double diskMaxMs = java.util.Arrays.stream(disk).max().orElseThrow() / 1e6;
            List<KernelSource> batch = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                batch.add(KernelSource.ir(new IrModule(List.of(scaled(i)))));
            }
            long b0 = System.nanoTime();
            cpu.compiler().compileAll(batch).forEach(KernelModule::close);
            double batchMs = (System.nanoTime() - b0) / 1e6;
            lines.add(String.format(Locale.ROOT, "compile: gcc %.1f ms per kernel (mean of the %d small kernels' misses;"
                    + " matmul_blocked %.0f ms), batch of 10 modules in one gcc run %.1f ms (%.1f ms per module); cache hit"
                    + " %.1f µs (memory, median of %d), %.2f ms (disk, after a restart: median of %d restarts, first %.2f,"
                    + " slowest %.2f)", gccPerKernel, small, gccBlocked, batchMs, batchMs / 10, hitUs, hits.length, diskMs,
                    DISK_RESTARTS, diskFirstMs, diskMaxMs));
            result.append(String.format(Locale.ROOT, "cache_hit_us=%.1f cache_disk_hit_ms=%.2f gcc_kernel_ms=%.1f"
                    + " gcc_blocked_ms=%.0f gcc_batch10_ms=%.1f", hitUs, diskMs, gccPerKernel, gccBlocked, batchMs));

            Device device = cpu.openDevices(1).getFirst();
            Device guardDevice = guarded.openDevices(1).getFirst();
            int n = 1 << 24;
            long vecBytes = 4L * n;
            int mm = 512;
            long matBytes = 4L * mm * mm;
            long pool = 3 * vecBytes + 3 * matBytes + 4L * (n / 256) + 4096;
            for (Device d : List.of(device, guardDevice)) {
                d.allocPool(1, pool, 64);
            }
            MemRef a = new MemRef(1, 0, vecBytes);
            MemRef b = new MemRef(1, vecBytes, vecBytes);
            MemRef c = new MemRef(1, 2 * vecBytes, vecBytes);
            MemRef ma = new MemRef(1, 3 * vecBytes, matBytes);
            MemRef mb = new MemRef(1, 3 * vecBytes + matBytes, matBytes);
            MemRef mc = new MemRef(1, 3 * vecBytes + 2 * matBytes, matBytes);
            MemRef partial = new MemRef(1, 3 * vecBytes + 3 * matBytes, 4L * (n / 256));
            try (NativeStream s = device.newStream("bench-ir"); NativeStream gs = guardDevice.newStream("bench-ir-guards");
                 Arena arena = Arena.ofShared()) {
                MemorySegment ones = arena.allocate(vecBytes, 64);
                for (long i = 0; i < n; i++) {
                    ones.setAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, i, 1f + (i % 7));
                }
                for (NativeStream st : List.of(s, gs)) {
                    for (MemRef r : List.of(a, b, c)) {
                        DirectCommands.run(st, new DeviceCommand.Upload(ones, r));
                    }
                    for (MemRef r : List.of(ma, mb)) {
                        DirectCommands.run(st, new DeviceCommand.Upload(ones.asSlice(0, matBytes), r));
                    }
                }
                ctx.progress().update("ir: memcpy");
                long[] copy = new long[RUNS];
                for (int i = 0; i < RUNS; i++) {
                    copy[i] = DirectCommands.run(s, new DeviceCommand.Copy(a, c));
                }
                double memcpyGBps = 2.0 * vecBytes / DirectCommands.median(copy);
                List<Launch> launches = List.of(
                        new Launch("vadd", new long[] {n}, List.of(new KernelArg.Buffer(a), new KernelArg.Buffer(b),
                                new KernelArg.Buffer(c), KernelArg.Scalar.i64(n)), 3.0 * vecBytes, false),
                        new Launch("saxpy", new long[] {n}, List.of(KernelArg.Scalar.f32(2f), new KernelArg.Buffer(a),
                                new KernelArg.Buffer(b), KernelArg.Scalar.i64(n)), 3.0 * vecBytes, false),
                        new Launch("sum", new long[] {n}, List.of(new KernelArg.Buffer(a), new KernelArg.Buffer(partial),
                                KernelArg.Scalar.i64(n)), vecBytes, false),
                        new Launch("matmul", new long[] {mm, mm}, List.of(new KernelArg.Buffer(ma), new KernelArg.Buffer(mb),
                                new KernelArg.Buffer(mc), KernelArg.Scalar.i32(mm), KernelArg.Scalar.i32(mm),
                                KernelArg.Scalar.i32(mm)), 2.0 * mm * mm * mm, true),
                        new Launch("matmul_blocked", new long[] {mm / DemoKernels.BLOCK_ROWS, mm / DemoKernels.BLOCK_COLS},
                                List.of(new KernelArg.Buffer(ma), new KernelArg.Buffer(mb), new KernelArg.Buffer(mc),
                                        KernelArg.Scalar.i32(mm), KernelArg.Scalar.i32(mm), KernelArg.Scalar.i32(mm)),
                                2.0 * mm * mm * mm, true),
                        new Launch("matmul_blocked_relaxed",
                                new long[] {mm / DemoKernels.BLOCK_ROWS, mm / DemoKernels.BLOCK_COLS},
                                List.of(new KernelArg.Buffer(ma), new KernelArg.Buffer(mb), new KernelArg.Buffer(mc),
                                        KernelArg.Scalar.i32(mm), KernelArg.Scalar.i32(mm), KernelArg.Scalar.i32(mm)),
                                2.0 * mm * mm * mm, true),
                        new Launch("matmul_lanes", new long[] {mm / LANES_COLS, mm / LANES_ROWS},
                                List.of(new KernelArg.Buffer(ma), new KernelArg.Buffer(mb), new KernelArg.Buffer(mc),
                                        KernelArg.Scalar.i32(mm), KernelArg.Scalar.i32(mm), KernelArg.Scalar.i32(mm)),
                                2.0 * mm * mm * mm, true),
                        new Launch("matmul_tiles", new long[] {mm / DemoKernels.TILES_BLOCK, mm / DemoKernels.TILES_BLOCK},
                                List.of(new KernelArg.Buffer(ma), new KernelArg.Buffer(mb), new KernelArg.Buffer(mc),
                                        KernelArg.Scalar.i32(mm), KernelArg.Scalar.i32(mm), KernelArg.Scalar.i32(mm)),
                                2.0 * mm * mm * mm, true),
                        // rows of 256: a read of x and a write of y counted (the kernel reads x twice and y once more)
                        new Launch("softmax", new long[] {n / SOFTMAX_COLS}, List.of(new KernelArg.Buffer(a), new KernelArg.Buffer(c),
                                KernelArg.Scalar.i64(n / SOFTMAX_COLS), KernelArg.Scalar.i64(SOFTMAX_COLS)), 2.0 * vecBytes, false));
                double vaddGBps = 0;
                double matmulGflops = 0;
                double blockedGflops = 0;
                double relaxedGflops = 0;
                double tilesGflops = 0;
                double lanesGflops = 0;
                StringBuilder guards = new StringBuilder();
                for (int k = 0; k < launches.size(); k++) {
                    Launch l = launches.get(k);
                    ctx.progress().update("ir: " + l.name);
                    Kernel proven = modules.get(k).kernels().getFirst();
                    Kernel forced = guarded.compiler().compile(KernelSource.ir(new IrModule(List.of(kernels.get(k)))))
                            .kernels().getFirst();
                    long[] tp = new long[RUNS];
                    long[] tg = new long[RUNS];
                    for (int i = 0; i < 3; i++) {
                        DirectCommands.run(s, new DeviceCommand.Launch(proven, l.global, null, l.args));
                        DirectCommands.run(gs, new DeviceCommand.Launch(forced, l.global, null, l.args));
                    }
                    for (int i = 0; i < RUNS; i++) {
                        tp[i] = DirectCommands.run(s, new DeviceCommand.Launch(proven, l.global, null, l.args));
                        tg[i] = DirectCommands.run(gs, new DeviceCommand.Launch(forced, l.global, null, l.args));
                    }
                    double p = DirectCommands.median(tp);
                    double g = DirectCommands.median(tg);
                    double rate = l.work / p;
                    lines.add(String.format(Locale.ROOT, "%-7s %8.3f ms proven, %8.3f ms guards forced (x%.2f); %.2f %s",
                            l.name, p / 1e6, g / 1e6, g / p, rate, l.flops ? "GFLOP/s" : "GB/s"));
                    guards.append(String.format(Locale.ROOT, " %s_guard_slowdown=%.2f", l.name, g / p));
                    table.append(String.format(Locale.ROOT, "| %s | %.3f | %.3f | **%.2f** | %.2f %s |%n", l.name, p / 1e6,
                            g / 1e6, g / p, rate, l.flops ? "GFLOP/s" : "GB/s"));
                    names.add(l.name);
                    slowdowns.add(g / p);
                    if (l.name.equals("vadd")) {
                        vaddGBps = rate;
                    }
                    if (l.name.equals("matmul")) {
                        matmulGflops = rate;
                    }
                    if (l.name.equals("matmul_blocked")) {
                        blockedGflops = rate;
                    }
                    if (l.name.equals("matmul_blocked_relaxed")) {
                        relaxedGflops = rate;
                    }
                    if (l.name.equals("matmul_tiles")) {
                        tilesGflops = rate;
                    }
                    if (l.name.equals("matmul_lanes")) {
                        lanesGflops = rate;
                    }
                }
                double peak = Peak.fp32Gflops();
                double ratio = vaddGBps / memcpyGBps;
                lines.add(String.format(Locale.ROOT, "vadd %.2f GB/s vs memcpy %.2f GB/s (MemorySegment.copy on the device,"
                        + " read + write counted): %.2f (floor %.1f) %s", vaddGBps, memcpyGBps, ratio, VADD_FLOOR,
                        ratio >= VADD_FLOOR ? "OK" : "BELOW FLOOR"));
                lines.add(String.format(Locale.ROOT, "matmul 512x512 f32 (16x16 local tiles, barriers): %.2f GFLOP/s = %.3f of"
                        + " the fp32 FMA peak %.1f GFLOP/s (%s)", matmulGflops, matmulGflops / peak, peak, Peak.describe()));
                lines.add(String.format(Locale.ROOT, "matmul_blocked 512x512 f32 (%dx%d blocks in registers, no local"
                        + " memory): %.2f GFLOP/s = %.3f of the same peak", DemoKernels.BLOCK_ROWS, DemoKernels.BLOCK_COLS,
                        blockedGflops, blockedGflops / peak));
                lines.add(String.format(Locale.ROOT, "matmul_blocked_relaxed 512x512 f32 (the same with relaxed_math:"
                        + " fused multiply-adds): %.2f GFLOP/s = %.3f of the same peak", relaxedGflops, relaxedGflops / peak));
                lines.add(String.format(Locale.ROOT, "matmul_lanes 512x512 f32 (%dx%d blocks per item, the grid over columns"
                        + " first: the CPU's lane form): %.2f GFLOP/s = %.3f of the same peak", LANES_ROWS, LANES_COLS,
                        lanesGflops, lanesGflops / peak));
                double best = Math.max(Math.max(blockedGflops, relaxedGflops), Math.max(lanesGflops, tilesGflops));
                lines.add(String.format(Locale.ROOT, "best IR matmul of this run: %.2f GFLOP/s = %.3f of the same peak (goal 0.30)",
                        best, best / peak));
                lines.add(String.format(Locale.ROOT, "matmul_tiles 512x512 f32 (%dx%d local tiles per group of %dx%d items,"
                        + " %dx%d blocks in registers per item): %.2f GFLOP/s = %.3f of the same peak", DemoKernels.TILES_EDGE,
                        DemoKernels.TILES_EDGE, DemoKernels.TILES_ITEMS, DemoKernels.TILES_ITEMS, DemoKernels.TILES_BLOCK,
                        DemoKernels.TILES_BLOCK, tilesGflops, tilesGflops / peak));
                result.append(String.format(Locale.ROOT, " vadd_GBps=%.2f memcpy_GBps=%.2f vadd_memcpy_ratio=%.2f"
                        + " matmul_GFLOPs=%.2f peak_GFLOPs=%.1f matmul_peak_fraction=%.3f matmul_blocked_GFLOPs=%.2f"
                        + " matmul_blocked_peak_fraction=%.3f matmul_blocked_relaxed_GFLOPs=%.2f matmul_tiles_GFLOPs=%.2f"
                        + " matmul_lanes_GFLOPs=%.2f matmul_lanes_peak_fraction=%.3f matmul_best_peak_fraction=%.3f",
                        vaddGBps, memcpyGBps, ratio, matmulGflops, peak, matmulGflops / peak, blockedGflops, blockedGflops / peak,
                        relaxedGflops, tilesGflops, lanesGflops, lanesGflops / peak, best / peak))
                        .append(guards);
            }
        }
        new BarChart("arrayd IR on cpu:0: every guard forced on / proven away (median of " + RUNS + ")", "time ratio", names)
                .add("guards forced / proven", slowdowns).writePng(ctx.outDir().resolve("guards.png"));
        String section = String.format(Locale.ROOT, """
                The same IR kernels compiled twice on `cpu:0`: as the validator leaves them (accesses it proved \
                in bounds carry no guard) and with every access guarded (`CpuOptions.withForceGuards`), run \
                alternately, %d times each, medians of the device time. A guard whose index is affine in the \
                global ids, the local ids (of a kernel that declares its local size) and loop variables, and an `if` \
                whose condition compares such expressions of the global ids, is checked once per block of \
                work-items, not per access (see docs/kernels.md); sum, matmul and matmul_tiles use local arrays and \
                barriers and run in phases, checked the same way per run of groups (the rest keep per-access guards); \
                matmul_blocked is the register-blocked matmul of docs/kernels.md (`DemoKernels.matmulBlocked`), \
                matmul_blocked_relaxed the same kernel with `relaxed_math` (gcc may fuse its multiply-adds), \
                matmul_lanes the same algorithm with a 4 x 1 block per work-item (four rows of one column) and the \
                grid over columns first, which the CPU runs in its lane form (16 work-items as the lanes of vectors), \
                matmul_tiles the matmul of docs/kernels.md with both local-memory tiles and register blocks \
                (`DemoKernels.matmulTiles`, phased like matmul).

                | kernel | proven ms | guards forced ms | forced / proven | rate (proven) |
                | --- | --- | --- | --- | --- |
                %s
                ![guards forced / proven](guards.png)

                %s
                """, RUNS, table, String.join("  \n", lines.stream().filter(l -> !l.contains(" ms proven, ")).toList()));
        return new Report(lines, result.toString(), section);
    }

    private record Launch(String name, long[] global, List<KernelArg> args, double work, boolean flops) {}

    // ---------------------------------------------------------------- kernels (docs/kernels.md, as model records)

    private static Expr gid(int d) {
        return new Expr.Builtin(Expr.Builtin.Kind.GLOBAL_ID, d);
    }

    private static Expr lid(int d) {
        return new Expr.Builtin(Expr.Builtin.Kind.LOCAL_ID, d);
    }

    private static Expr v(String name) {
        return new Expr.Var(name);
    }

    private static Expr p(String name) {
        return new Expr.Param(name);
    }

    private static Expr i64(long x) {
        return Expr.Const.i64(x);
    }

    private static Expr bin(Expr.Binary.Op op, Expr a, Expr b) {
        return new Expr.Binary(op, a, b);
    }

    private static Expr add(Expr a, Expr b) {
        return bin(Expr.Binary.Op.ADD, a, b);
    }

    private static Expr mul(Expr a, Expr b) {
        return bin(Expr.Binary.Op.MUL, a, b);
    }

    private static Expr load(String a, Expr i) {
        return new Expr.Load(a, i);
    }

    private static Stmt let(String name, Expr value) {
        return new Stmt.Let(name, value, false);
    }

    private static Stmt ifLt(Expr a, Expr b, Stmt... then) {
        return new Stmt.If(bin(Expr.Binary.Op.LT, a, b), List.of(then), List.of());
    }

    private static IrParam.Buffer buf(String name, Access access, Expr minExtent) {
        return new IrParam.Buffer(name, DType.F32, access, minExtent);
    }

    private static IrParam.Scalar n() {
        return new IrParam.Scalar("n", DType.I64, 0L, 1L << 40);
    }

    static IrKernel vadd() {
        return new IrKernel("vadd", List.of(buf("a", Access.READ, p("n")), buf("b", Access.READ, p("n")),
                buf("c", Access.WRITE, p("n")), n()), 1, List.of(), List.of(let("i", gid(0)),
                ifLt(v("i"), p("n"), new Stmt.Store("c", v("i"), add(load("a", v("i")), load("b", v("i")))))));
    }

    /** vadd times a constant: ten of them are ten different modules (cache keys) for the batch measurement. */
    static IrKernel scaled(int k) {
        return new IrKernel("scaled" + k, List.of(buf("a", Access.READ, p("n")), buf("c", Access.WRITE, p("n")), n()), 1,
                List.of(), List.of(let("i", gid(0)), ifLt(v("i"), p("n"),
                new Stmt.Store("c", v("i"), mul(load("a", v("i")), Expr.Const.f32(k + 1.5f))))));
    }

    static IrKernel saxpy() {
        return new IrKernel("saxpy", List.of(new IrParam.Scalar("s", DType.F32, null, null), buf("x", Access.READ, p("n")),
                buf("y", Access.READ_WRITE, p("n")), n()), 1, List.of(), List.of(let("i", gid(0)),
                ifLt(v("i"), p("n"), new Stmt.Store("y", v("i"), add(mul(p("s"), load("x", v("i"))), load("y", v("i")))))));
    }

    static IrKernel sum() {
        Expr l = lid(0);
        return new IrKernel("sum", List.of(buf("x", Access.READ, p("n")), buf("partial", Access.WRITE, null), n()), 1,
                List.of(256L), List.of(
                new Stmt.LocalArray("tile", DType.F32, 256),
                let("i", gid(0)),
                new Stmt.Store("tile", l, new Expr.Select(bin(Expr.Binary.Op.LT, v("i"), p("n")), load("x", v("i")),
                        Expr.Const.f32(0))),
                new Stmt.Barrier(),
                new Stmt.For("level", i64(0), i64(8), 1, List.of(
                        let("stride", bin(Expr.Binary.Op.SHR, i64(128), v("level"))),
                        ifLt(l, v("stride"), new Stmt.Accumulate("tile", l, Stmt.Accumulate.Op.ADD,
                                load("tile", add(l, v("stride"))))),
                        new Stmt.Barrier())),
                new Stmt.If(bin(Expr.Binary.Op.EQ, l, i64(0)), List.of(new Stmt.Store("partial",
                        new Expr.Builtin(Expr.Builtin.Kind.GROUP_ID, 0), load("tile", i64(0)))), List.of())));
    }

    /** Columns of a softmax row. */
    static final int SOFTMAX_COLS = 256;

    /** The demo's row softmax (one work-item per row, max-subtracted), read as the daemon reads a client's IR. */
    static IrKernel softmax() {
        return dev.arrayd.server.IrCodec.module(dev.arrayd.proto.v1.IrModule.newBuilder()
                .addKernels(dev.arrayd.cli.DemoKernels.softmax().proto()).build(), "ir").kernels().getFirst();
    }

    /** The matmul of docs/kernels.md with both local-memory tiles and register blocks, read as a daemon reads IR. */
    static IrKernel matmulTiles() {
        return dev.arrayd.server.IrCodec.module(dev.arrayd.proto.v1.IrModule.newBuilder()
                .addKernels(DemoKernels.matmulTiles().proto()).build(), "ir").kernels().getFirst();
    }

    /** Rows and columns of c per work-item in {@link #matmulLanes()}. */
    static final int LANES_ROWS = 4;
    static final int LANES_COLS = 1;

    /**
     * The register-blocked matmul with a 4 x 1 block per work-item (four rows of one column), the grid over columns
     * first: neighbouring work-items read neighbouring elements of b, which the CPU runs in its lane form, 16
     * work-items as the lanes of its vectors, the four sums of 16 lanes in eight 256-bit registers; read as a daemon
     * reads IR.
     */
    static IrKernel matmulLanes() {
        return dev.arrayd.server.IrCodec.module(dev.arrayd.proto.v1.IrModule.newBuilder()
                .addKernels(DemoKernels.matmulBlocked("matmul_lanes", LANES_ROWS, LANES_COLS, false, 8192).proto()).build(), "ir")
                .kernels().getFirst();
    }

    /** The register-blocked matmul of docs/kernels.md (strict, or relaxed and renamed), read as a daemon reads IR. */
    static IrKernel matmulBlocked(boolean relaxed) {
        dev.arrayd.proto.v1.IrKernel k = DemoKernels.matmulBlocked().proto();
        if (relaxed) {
            k = k.toBuilder().setRelaxedMath(true).setName("matmul_blocked_relaxed").build();
        }
        return dev.arrayd.server.IrCodec.module(dev.arrayd.proto.v1.IrModule.newBuilder().addKernels(k).build(), "ir")
                .kernels().getFirst();
    }

    static IrKernel matmul() {
        Expr lx = lid(0);
        Expr ly = lid(1);
        Expr m = new Expr.Cast(IrType.I64, p("m"));
        Expr nn = new Expr.Cast(IrType.I64, p("n"));
        Expr k = new Expr.Cast(IrType.I64, p("k"));
        Expr t = i64(16);
        return new IrKernel("matmul", List.of(buf("a", Access.READ, mul(m, k)), buf("b", Access.READ, mul(k, nn)),
                buf("c", Access.WRITE, mul(m, nn)), new IrParam.Scalar("m", DType.I32, 0L, 8192L),
                new IrParam.Scalar("n", DType.I32, 0L, 8192L), new IrParam.Scalar("k", DType.I32, 0L, 8192L)),
                2, List.of(16L, 16L), List.of(
                new Stmt.LocalArray("ta", DType.F32, 256),
                new Stmt.LocalArray("tb", DType.F32, 256),
                let("row", gid(1)),
                let("col", gid(0)),
                new Stmt.Let("acc", Expr.Const.f32(0), true),
                new Stmt.For("tile", i64(0), bin(Expr.Binary.Op.DIV, k, t), 1, List.of(
                        new Stmt.Store("ta", add(mul(ly, t), lx), load("a", add(mul(v("row"), k), add(mul(v("tile"), t), lx)))),
                        new Stmt.Store("tb", add(mul(ly, t), lx), load("b", add(mul(add(mul(v("tile"), t), ly), nn), v("col")))),
                        new Stmt.Barrier(),
                        new Stmt.For("e", i64(0), t, 1, List.of(new Stmt.Accumulate("acc", null, Stmt.Accumulate.Op.ADD,
                                mul(load("ta", add(mul(ly, t), v("e"))), load("tb", add(mul(v("e"), t), lx)))))),
                        new Stmt.Barrier())),
                new Stmt.If(bin(Expr.Binary.Op.LOGICAL_AND, bin(Expr.Binary.Op.LT, v("row"), m),
                        bin(Expr.Binary.Op.LT, v("col"), nn)), List.of(new Stmt.Store("c", add(mul(v("row"), nn), v("col")),
                        v("acc"))), List.of())));
    }

    /** The machine's fp32 FMA peak, computed (not measured) from /proc/cpuinfo. */
    static final class Peak {
        private Peak() {}

        static int lanes() {
            String flags = cpuinfo("flags");
            return flags.contains(" avx512f") ? 16 : flags.contains(" avx2") ? 8 : 4;
        }

        static double mhz() {
            try {
                return Double.parseDouble(cpuinfo("cpu MHz").trim());
            } catch (NumberFormatException e) {
                return 2000;
            }
        }

        static double fp32Gflops() {
            return Runtime.getRuntime().availableProcessors() * mhz() / 1e3 * lanes() * 2 * 2;
        }

        static String describe() {
            return String.format(Locale.ROOT, "computed: %d cores x %.0f MHz x %d fp32 lanes x 2 flops/FMA x 2 FMA units",
                    Runtime.getRuntime().availableProcessors(), mhz(), lanes());
        }

        private static String cpuinfo(String key) {
            try {
                for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                    if (line.startsWith(key)) {
                        return " " + line.substring(line.indexOf(':') + 1) + " ";
                    }
                }
            } catch (java.io.IOException e) {
                // unknown machine: the defaults below
            }
            return "";
        }
    }
}
