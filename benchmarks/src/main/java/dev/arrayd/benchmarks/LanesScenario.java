package dev.arrayd.benchmarks;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.LaneBlocks;
import dev.arrayd.client.Ir;
import dev.arrayd.client.IrBlock;
import dev.arrayd.client.IrExpr;
import dev.arrayd.client.IrKernelSpec;
import dev.arrayd.devices.cpu.CpuBackend;
import dev.arrayd.server.IrCodec;
import dev.arrayd.devices.cpu.CpuOptions;
import dev.arrayd.devices.opencl.OpenClBackend;
import java.io.BufferedWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code bench lanes}: kernels that loop inside each work-item, the way a first version is written, on the CPU
 * backend with its lane form ({@link LaneBlocks}, the default: blocks of 16 work-items run as vector lanes, the
 * item loop inside the kernel's own loop) and without it ({@link LaneBlocks.Rule#OFF}), and on arrayd's OpenCL
 * backend (PoCL, whose work-group functions vectorize across work-items) from the same IR and from the same
 * algorithms hand-written in OpenCL C, all in this process, run in turns. Kernels: a naive matmul (one work-item per element of c, its dot product in the
 * strict order) and a 1-d convolution with 33 taps. Outputs are checked equal to plain Java before timing.
 */
@Command(name = "lanes", sortOptions = false,
        description = {"IR kernels that loop inside each work-item (a naive matmul, a 33-tap convolution) on cpu:0 with"
                + " the lane form and without it, and on opencl:0 (PoCL) when there is one, from the IR and from the same"
                + " algorithms in OpenCL C; in this process.",
                "Writes lanes.csv and lanes.png; the last line of stdout is: RESULT lanes"
                        + " <kernel>_lanes_GFLOPs=.. <kernel>_items_GFLOPs=.. <kernel>_lanes_speedup=.."
                        + " [<kernel>_pocl_GFLOPs=.. <kernel>_pocl_c_GFLOPs=.. <kernel>_lanes_of_pocl=.. <kernel>_lanes_of_pocl_c=..]",
                "Defaults: --iterations " + LanesScenario.DEFAULT_RUNS + " runs of each kernel and column, after --warmup "
                        + LanesScenario.DEFAULT_WARMUP + "; --size " + LanesScenario.DEFAULT_SIZE + " (matmul), --length "
                        + LanesScenario.DEFAULT_LENGTH + " (convolution)."})
final class LanesScenario implements Scenario {

    static final int DEFAULT_RUNS = 15;
    static final int DEFAULT_WARMUP = 2;
    static final int DEFAULT_SIZE = 512;
    static final int DEFAULT_LENGTH = 1 << 22;
    static final int TAPS = 33;

    @Mixin
    BenchOptions options = new BenchOptions();

    @Option(names = "--size", paramLabel = "N", defaultValue = "" + DEFAULT_SIZE,
            description = "Matmul size (N x N f32).")
    int size;

    @Option(names = "--length", paramLabel = "N", defaultValue = "" + DEFAULT_LENGTH,
            description = "Convolution length (f32 elements).")
    int length;

    @Override
    public String name() {
        return "lanes";
    }

    @Override
    public BenchOptions options() {
        return options;
    }

    @Override
    public boolean usesDaemon() {
        return false;
    }

    /**
     * One way of running the kernels: a device of a backend, its stream and compiled kernels; {@code exact}: its
     * outputs must equal plain Java's bit for bit (IR), else within a relative 1e-4 (OpenCL C may fuse a multiply
     * and an add).
     */
    private record Column(String key, String label, Device device, NativeStream stream, List<Kernel> kernels, boolean exact) {}

    /**
     * Where a column's kernels come from: a backend, and whether they are the hand-written OpenCL C ({@link #OPENCL_C},
     * run on the device of the column before it).
     */
    private record Source(String key, String label, Backend backend, boolean handWritten) {}

    /** The same two kernels hand-written in OpenCL C, in the OpenCL backend's convention ({@code ARRAYD_KERNEL}). */
    static final String OPENCL_C = """
            ARRAYD_KERNEL void matmul_naive(__global const float *a, __global const float *b, __global float *c, int m, int n,
                                            int k) {
                long col = get_global_id(0);
                long row = get_global_id(1);
                if (row < m && col < n) {
                    float acc = 0.0f;
                    for (long kk = 0; kk < k; kk++) acc += a[row * k + kk] * b[kk * n + col];
                    c[row * n + col] = acc;
                }
            }

            ARRAYD_KERNEL void conv33(__global const float *x, __global const float *w, __global float *y, long n) {
                long i = get_global_id(0);
                if (i < n) {
                    float acc = 0.0f;
                    for (int t = 0; t < 33; t++) acc += x[i + t] * w[t];
                    y[i] = acc;
                }
            }
            """;

    private static KernelSource openClSource() {
        return new KernelSource(Dialect.OPENCL_C, OPENCL_C, List.of(
                new KernelSignature("matmul_naive", List.of(KernelParam.buffer("a", DType.F32, Access.READ),
                        KernelParam.buffer("b", DType.F32, Access.READ), KernelParam.buffer("c", DType.F32, Access.WRITE),
                        KernelParam.scalar("m", DType.I32), KernelParam.scalar("n", DType.I32),
                        KernelParam.scalar("k", DType.I32))),
                new KernelSignature("conv33", List.of(KernelParam.buffer("x", DType.F32, Access.READ),
                        KernelParam.buffer("w", DType.F32, Access.READ), KernelParam.buffer("y", DType.F32, Access.WRITE),
                        KernelParam.scalar("n", DType.I64)))));
    }

    @Override
    public Report run(BenchContext ctx) throws Exception {
        int runs = options.iterations(DEFAULT_RUNS);
        int warmup = options.warmup(DEFAULT_WARMUP);
        Progress progress = ctx.progress();
        List<IrKernel> kernels = List.of(naiveMatmul(), conv());
        Path onCache = Files.createTempDirectory("arrayd-bench-lanes-");
        Path offCache = Files.createTempDirectory("arrayd-bench-lanes-off-");
        List<String> lines = new ArrayList<>();
        try (CpuBackend on = new CpuBackend(CpuOptions.defaults().withCacheDir(onCache));
             CpuBackend off = new CpuBackend(CpuOptions.defaults().withCacheDir(offCache).withLanes(LaneBlocks.Rule.OFF));
             OpenClBackend ocl = new OpenClBackend();
             Arena arena = Arena.ofShared()) {
            if (on.unavailableReason().isPresent()) {
                throw new IllegalStateException("cpu backend unavailable: " + on.unavailableReason().get());
            }
            long n = size;
            long matBytes = 4L * n * n;
            long convBytes = 4L * (length + TAPS);
            long pool = 3 * matBytes + 2 * convBytes + 4L * TAPS + 4096;
            MemRef a = new MemRef(1, 0, matBytes);
            MemRef b = new MemRef(1, matBytes, matBytes);
            MemRef c = new MemRef(1, 2 * matBytes, matBytes);
            MemRef x = new MemRef(1, 3 * matBytes, convBytes);
            MemRef y = new MemRef(1, 3 * matBytes + convBytes, 4L * length);
            MemRef w = new MemRef(1, 3 * matBytes + 2 * convBytes, 4L * TAPS);
            long elements = Math.max(convBytes / 4, 2 * n * n);
            MemorySegment data = arena.allocate(4 * elements, 64);
            float[] values = new float[(int) elements];
            for (int i = 0; i < values.length; i++) {
                values[i] = (i % 13) * 0.25f - 1;
                data.setAtIndex(ValueLayout.JAVA_FLOAT, i, values[i]);
            }
            List<Column> columns = new ArrayList<>();
            List<Source> sources = new ArrayList<>(List.of(
                    new Source("lanes", "arrayd cpu:0, IR with the lane form (default)", on, false),
                    new Source("items", "arrayd cpu:0, IR item by item (lanes off)", off, false)));
            if (ocl.unavailableReason().isEmpty()) {
                sources.add(new Source("pocl", "arrayd opencl:0, the same IR rendered to OpenCL C", ocl, false));
                sources.add(new Source("pocl_c", "arrayd opencl:0, the same algorithms hand-written in OpenCL C", ocl, true));
            } else {
                lines.add("opencl:0 columns left out: " + ocl.unavailableReason().get());
            }
            try {
                for (Source src : sources) {
                    progress.update("lanes: compiling for " + src.key());
                    // the hand-written OpenCL C runs on the device of the column before it, on inputs already there
                    Device d = src.handWritten() ? columns.getLast().device() : src.backend().openDevices(1).getFirst();
                    NativeStream s = d.newStream("bench-lanes-" + src.key());
                    if (!src.handWritten()) {
                        d.allocPool(1, pool, 64);
                        DirectCommands.run(s, new DeviceCommand.Upload(data.asSlice(0, matBytes), a));
                        DirectCommands.run(s, new DeviceCommand.Upload(data.asSlice(matBytes, matBytes), b));
                        DirectCommands.run(s, new DeviceCommand.Upload(data.asSlice(0, convBytes), x));
                        DirectCommands.run(s, new DeviceCommand.Upload(data.asSlice(4, 4L * TAPS), w));
                    }
                    List<Kernel> compiled = src.backend().compiler().compile(src.handWritten() ? openClSource()
                            : KernelSource.ir(new IrModule(kernels))).kernels();
                    String label = src.label() + (src.backend() == ocl ? " (" + d.info().name() + ")" : "");
                    columns.add(new Column(src.key(), label, d, s, compiled, !src.handWritten()));
                }
                List<List<KernelArg>> args = List.of(
                        List.of(new KernelArg.Buffer(a), new KernelArg.Buffer(b), new KernelArg.Buffer(c),
                                KernelArg.Scalar.i32(size), KernelArg.Scalar.i32(size), KernelArg.Scalar.i32(size)),
                        List.of(new KernelArg.Buffer(x), new KernelArg.Buffer(w), new KernelArg.Buffer(y),
                                KernelArg.Scalar.i64(length)));
                List<long[]> grids = List.of(new long[] {n, n}, new long[] {length});
                List<MemRef> outputs = List.of(c, y);
                List<float[]> expected = List.of(matmulReference(values, size), convReference(values, length));
                double[] flops = {2.0 * n * n * n, 2.0 * length * TAPS};
                StringBuilder result = new StringBuilder();
                StringBuilder table = new StringBuilder();
                List<String> names = new ArrayList<>();
                List<Double> speedups = new ArrayList<>();
                List<Double> ofPocl = new ArrayList<>();
                List<Double> ofPoclC = new ArrayList<>();
                try (BufferedWriter csv = Files.newBufferedWriter(ctx.outDir().resolve("lanes.csv"))) {
                    csv.write("kernel,column,run,device_ms\n");
                    for (int k = 0; k < kernels.size(); k++) {
                        String name = kernels.get(k).name();
                        long[][] t = new long[columns.size()][runs];
                        for (int col = 0; col < columns.size(); col++) {
                            Column column = columns.get(col);
                            progress.update("lanes: checking " + name + " on " + column.key());
                            DirectCommands.run(column.stream(), new DeviceCommand.Launch(column.kernels().get(k), grids.get(k),
                                    null, args.get(k)));
                            check(column, outputs.get(k), expected.get(k), name);
                        }
                        for (int i = -warmup; i < runs; i++) {
                            progress.update(String.format(Locale.ROOT, "lanes: %s run %d of %d", name, Math.max(0, i + 1), runs));
                            for (int col = 0; col < columns.size(); col++) {
                                Column column = columns.get(col);
                                long ns = DirectCommands.run(column.stream(), new DeviceCommand.Launch(column.kernels().get(k),
                                        grids.get(k), null, args.get(k)));
                                if (i >= 0) {
                                    t[col][i] = ns;
                                    csv.write(String.format(Locale.ROOT, "%s,%s,%d,%.4f%n", name, column.key(), i, ns / 1e6));
                                }
                            }
                        }
                        double lanes = DirectCommands.median(t[0]);
                        double items = DirectCommands.median(t[1]);
                        StringBuilder line = new StringBuilder(String.format(Locale.ROOT,
                                "%s: %.2f ms in lanes (%.2f GFLOP/s), %.2f ms item by item (%.2f GFLOP/s): x%.2f", name,
                                lanes / 1e6, flops[k] / lanes, items / 1e6, flops[k] / items, items / lanes));
                        result.append(String.format(Locale.ROOT, " %s_lanes_GFLOPs=%.2f %s_items_GFLOPs=%.2f"
                                + " %s_lanes_speedup=%.2f", name, flops[k] / lanes, name, flops[k] / items, name, items / lanes));
                        String pocl = "| – | – | – | – |";
                        if (columns.size() > 3) {
                            double p = DirectCommands.median(t[2]);
                            double pc = DirectCommands.median(t[3]);
                            line.append(String.format(Locale.ROOT, "; PoCL %.2f ms (%.2f GFLOP/s) from the IR, %.2f ms"
                                    + " (%.2f GFLOP/s) from OpenCL C: lanes %.2f and %.2f of PoCL's rates", p / 1e6, flops[k] / p,
                                    pc / 1e6, flops[k] / pc, p / lanes, pc / lanes));
                            result.append(String.format(Locale.ROOT, " %s_pocl_GFLOPs=%.2f %s_pocl_c_GFLOPs=%.2f"
                                    + " %s_lanes_of_pocl=%.2f %s_lanes_of_pocl_c=%.2f", name, flops[k] / p, name, flops[k] / pc,
                                    name, p / lanes, name, pc / lanes));
                            pocl = String.format(Locale.ROOT, "| %.2f | %.2f | **%.2f** | **%.2f** |", flops[k] / p,
                                    flops[k] / pc, p / lanes, pc / lanes);
                            ofPocl.add(p / lanes);
                            ofPoclC.add(pc / lanes);
                        }
                        lines.add(line.toString());
                        table.append(String.format(Locale.ROOT, "| %s | %.2f | %.2f | **%.2f** %s%n", name, flops[k] / lanes,
                                flops[k] / items, items / lanes, pocl));
                        names.add(name);
                        speedups.add(items / lanes);
                    }
                }
                BarChart chart = new BarChart("arrayd IR on cpu:0: lanes against item by item"
                        + (ofPocl.isEmpty() ? "" : " and against PoCL") + " (median of " + runs + ")", "ratio of rates", names)
                        .add("lanes / item by item", speedups);
                if (!ofPocl.isEmpty()) {
                    chart.add("lanes / PoCL (IR)", ofPocl).add("lanes / PoCL (OpenCL C)", ofPoclC);
                }
                chart.writePng(ctx.outDir().resolve("lanes.png"));
                StringBuilder columnList = new StringBuilder();
                for (Column column : columns) {
                    columnList.append("- **").append(column.key()).append(":** ").append(column.label()).append('\n');
                }
                String section = String.format(Locale.ROOT, """
                        Kernels that loop inside each work-item, as a first version is written, in the portable IR: \
                        `matmul_naive` (%d x %d f32, one work-item per element of c, its dot product in the strict \
                        order) and `conv33` (%d f32 elements, 33 taps), each column one device in this process, \
                        taking turns, %d runs each after %d, medians of the device time; every output checked \
                        against plain Java first.

                        %s
                        | kernel | lanes GFLOP/s | item by item GFLOP/s | lanes / item by item | PoCL (IR) GFLOP/s | PoCL (OpenCL C) GFLOP/s | lanes / PoCL (IR) | lanes / PoCL (OpenCL C) |
                        | --- | --- | --- | --- | --- | --- | --- | --- |
                        %s
                        ![lanes against item by item and PoCL](lanes.png)

                        %s
                        """, size, size, length, runs, warmup, columnList, table, String.join("  \n", lines));
                return new Report(lines, result.toString().trim(), section);
            } finally {
                columns.forEach(col -> col.stream().close());
            }
        }
    }

    private static void check(Column column, MemRef output, float[] want, String name) throws Exception {
        MemorySegment got = Arena.ofAuto().allocate(output.bytes(), 64);
        DirectCommands.run(column.stream(), new DeviceCommand.Download(output, got));
        for (int i = 0; i < want.length; i++) {
            float g = got.getAtIndex(ValueLayout.JAVA_FLOAT, i);
            boolean same = column.exact() ? Float.floatToIntBits(g) == Float.floatToIntBits(want[i])
                    : Math.abs(g - want[i]) <= 1e-4 * Math.max(1, Math.abs(want[i]));
            if (!same) {
                throw new IllegalStateException(name + " on " + column.key() + ": element " + i + " is " + g
                        + " (expected " + want[i] + ")");
            }
        }
    }

    /** c = a b with a the first n x n values and b the next, summed in the kernel's order. */
    private static float[] matmulReference(float[] v, int n) {
        float[] c = new float[n * n];
        for (int row = 0; row < n; row++) {
            for (int col = 0; col < n; col++) {
                float acc = 0;
                for (int k = 0; k < n; k++) {
                    acc = acc + v[row * n + k] * v[n * n + k * n + col];
                }
                c[row * n + col] = acc;
            }
        }
        return c;
    }

    /** y[i] = sum over t of x[i + t] w[t], x the values from 0 and w the values from 1. */
    private static float[] convReference(float[] v, int length) {
        float[] y = new float[length];
        for (int i = 0; i < length; i++) {
            float acc = 0;
            for (int t = 0; t < TAPS; t++) {
                acc = acc + v[i + t] * v[1 + t];
            }
            y[i] = acc;
        }
        return y;
    }

    /** A kernel written with the client's IR builder, read as a daemon reads it. */
    private static IrKernel read(IrKernelSpec spec) {
        return IrCodec.module(dev.arrayd.proto.v1.IrModule.newBuilder().addKernels(spec.proto()).build(), "ir").kernels()
                .getFirst();
    }

    /** c = a (m x k) b (k x n): one work-item per element of c, its dot product in the IR's strict order. */
    static IrKernel naiveMatmul() {
        IrExpr m = Ir.param("m").toI64();
        IrExpr n = Ir.param("n").toI64();
        IrExpr k = Ir.param("k").toI64();
        return read(Ir.kernel("matmul_naive")
                .gridDims(2)
                .buffer("a", dev.arrayd.client.DType.F32, dev.arrayd.client.Access.READ, m.mul(k))
                .buffer("b", dev.arrayd.client.DType.F32, dev.arrayd.client.Access.READ, k.mul(n))
                .buffer("c", dev.arrayd.client.DType.F32, dev.arrayd.client.Access.WRITE, m.mul(n))
                .scalar("m", dev.arrayd.client.DType.I32, 0, 65536)
                .scalar("n", dev.arrayd.client.DType.I32, 0, 65536)
                .scalar("k", dev.arrayd.client.DType.I32, 0, 65536)
                .body(b -> {
                    IrExpr row = b.let("row", Ir.globalId(1));
                    IrExpr col = b.let("col", Ir.globalId(0));
                    b.when(row.lt(m).andThen(col.lt(n)), then -> {
                        then.var("acc", Ir.f32(0));
                        then.loop("kk", Ir.i64(0), k, (step, kk) -> step.accumulate("acc", IrBlock.Accumulate.ADD,
                                Ir.load("a", row.mul(k).add(kk)).mul(Ir.load("b", kk.mul(n).add(col)))));
                        then.store("c", row.mul(n).add(col), Ir.var("acc"));
                    });
                }));
    }

    /** y[i] = sum over t < 33 of x[i + t] w[t], for i < n (x holds n + 33 elements). */
    static IrKernel conv() {
        IrExpr n = Ir.param("n");
        return read(Ir.kernel("conv33")
                .buffer("x", dev.arrayd.client.DType.F32, dev.arrayd.client.Access.READ, n.add(Ir.i64(TAPS)))
                .buffer("w", dev.arrayd.client.DType.F32, dev.arrayd.client.Access.READ, Ir.i64(TAPS))
                .buffer("y", dev.arrayd.client.DType.F32, dev.arrayd.client.Access.WRITE, n)
                .scalar("n", dev.arrayd.client.DType.I64, 0, 1L << 40)
                .body(b -> {
                    IrExpr i = b.let("i", Ir.globalId(0));
                    b.when(i.lt(n), then -> {
                        then.var("acc", Ir.f32(0));
                        then.loop("t", Ir.i64(0), Ir.i64(TAPS), (step, t) -> step.accumulate("acc", IrBlock.Accumulate.ADD,
                                Ir.load("x", i.add(t)).mul(Ir.load("w", t))));
                        then.store("y", i, Ir.var("acc"));
                    });
                }));
    }
}
