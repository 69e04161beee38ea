package dev.arrayd.benchmarks;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bench cuda --from DIR}: turns what the GPU check kit wrote on a GPU machine ({@code probe.txt},
 * {@code bench.txt}, {@code summary.txt}) into a results folder like a scenario's: a table of every CUDA
 * figure against its raw-JCuda anchor, the transfer sweep, two plots, the machine (the GPU host's, not
 * this one's) and the {@code RESULT cuda} line. The kit runs where there is no JDK; this runs here.
 */
@Command(name = "cuda", sortOptions = false,
        description = {"Reports the GPU check kit's CUDA benchmark (gpu-kit/target/gpu-kit/run.sh, run on a GPU machine) "
                + "as a results folder: table, plots, the GPU host as the machine.",
                "The last line of stdout is the kit's 'RESULT cuda key=value ...'."})
final class CudaCommand implements Tool {

    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");
    private static final Pattern KEY_VALUE = Pattern.compile("(\\w+)=(\"[^\"]*\"|\\S+)");
    private static final Pattern LAUNCH = Pattern.compile("^launch round trip: arrayd inline ([\\d.]+) us, queued ([\\d.]+) us, "
            + "raw JCuda ([\\d.]+) us", Pattern.MULTILINE);
    private static final Pattern SWEEP = Pattern.compile("^transfer sweep: lanes (\\d+), chunk (\\d+) MiB: upload ([\\d.]+) GB/s, "
            + "download ([\\d.]+) GB/s", Pattern.MULTILINE);
    private static final Pattern NAIVE = Pattern.compile("one item per element ([\\d.]+) GFLOP/s");
    private static final Pattern GUARDS = Pattern.compile("^guards: vadd of (\\d+) floats ([\\d.]+) us proven, ([\\d.]+) us guarded",
            Pattern.MULTILINE);
    private static final Pattern DATE = Pattern.compile("^arrayd GPU check, (\\d{4}-\\d{2}-\\d{2})T");
    private static final Pattern HOST = Pattern.compile("^host: (.+); (\\d+) cores; (.+); (.+)$", Pattern.MULTILINE);
    private static final Pattern JAVA = Pattern.compile("^(openjdk|java) version \"([^\"]+)\"", Pattern.MULTILINE);

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    boolean help;

    @Option(names = "--from", paramLabel = "DIR", required = true,
            description = "The folder the kit wrote ($OUT of run.sh: probe.txt, bench.txt, summary.txt).")
    Path from;

    @Option(names = "--out", paramLabel = "DIR",
            description = "Results folder; default results/cuda-<yyyyMMdd-HHmmss> under the current directory.")
    Path out;

    @Override
    public int run(PrintStream stdout, Progress progress) throws Exception {
        String bench = read("bench.txt");
        String probe = read("probe.txt");
        String summary = read("summary.txt");
        String resultLine = bench.lines().filter(l -> l.startsWith("RESULT cuda ")).reduce((a, b) -> b)
                .orElseThrow(() -> new IllegalArgumentException("--from: " + from.resolve("bench.txt")
                        + " has no RESULT cuda line (expected: the kit's benchmark output)"));
        Map<String, String> r = keyValues(resultLine);
        if (r.containsKey("skipped")) {
            throw new IllegalArgumentException("--from: " + from + ": the benchmark was skipped there ("
                    + bench.lines().filter(l -> l.startsWith("cuda benchmark skipped")).findFirst().orElse("no GPU")
                    + "); nothing to report");
        }
        Matcher launch = find(LAUNCH, bench, "bench.txt", "launch round trip: arrayd inline ...");
        Matcher naive = find(NAIVE, bench, "bench.txt", "ir matmul ... one item per element ...");
        Matcher guards = find(GUARDS, bench, "bench.txt", "guards: vadd of ...");
        Matcher date = find(DATE, summary, "summary.txt", "arrayd GPU check, <date> ...");
        Matcher host = find(HOST, probe, "probe.txt", "host: <cpu>; <n> cores; <memory>; <kernel>");
        Matcher java = find(JAVA, probe, "probe.txt", "openjdk version \"...\"");
        String gpu = line(probe, "gpu: ").orElse(r.get("device"));
        String nvrtc = line(probe, "nvrtc: ").orElse("?");

        Path dir = out != null ? out : Path.of("results", "cuda-" + LocalDateTime.now().format(STAMP));
        Files.createDirectories(dir);
        progress.line("cuda: reporting " + from + " into " + dir);

        double launchInline = num(launch.group(1));
        double launchQueued = num(launch.group(2));
        double launchRaw = num(launch.group(3));
        List<String[]> rows = new ArrayList<>();
        rows.add(row("empty-kernel launch round trip, run on the caller's thread (a short ready launch)",
                us(launchInline), us(launchRaw), launchInline / launchRaw, "≤ 1.5"));
        rows.add(row("the same, queued to the stream's worker (the caller parked on a future)", us(launchQueued), us(launchRaw),
                launchQueued / launchRaw, ""));
        rows.add(row("upload 256 MiB from ordinary memory (staged over copy lanes)", gbps(r, "upload_GBps"),
                gbps(r, "raw_upload_GBps") + " (pinned)", num(r.get("h2d_ratio")), "≥ 0.8"));
        rows.add(row("download 256 MiB into ordinary memory (staged over copy lanes)", gbps(r, "download_GBps"),
                gbps(r, "raw_download_GBps") + " (pinned)", num(r.get("d2h_ratio")), "≥ 0.8"));
        rows.add(row("upload 256 MiB from page-locked memory (a shared-memory region: one DMA)", gbps(r, "locked_upload_GBps"),
                gbps(r, "raw_upload_GBps"), num(r.get("locked_h2d_ratio")), ""));
        rows.add(row("download 256 MiB into page-locked memory", gbps(r, "locked_download_GBps"), gbps(r, "raw_download_GBps"),
                num(r.get("locked_d2h_ratio")), ""));
        rows.add(row("SGEMM 2048², IR tiled in local memory vs CUDA C tiled 16×16", gflops(r.get("ir_matmul_GFLOPs")),
                gflops(r.get("matmul_GFLOPs")), num(r.get("ir_matmul_of_native")), "≥ 0.3"));
        rows.add(row("SGEMM 2048², IR one work-item per element vs CUDA C tiled", gflops(naive.group(1)),
                gflops(r.get("matmul_GFLOPs")), num(naive.group(1)) / num(r.get("matmul_GFLOPs")), ""));
        rows.add(row("IR vadd of " + guards.group(1) + " floats, three guards kept vs proven away (device time)",
                us(num(guards.group(3))), us(num(guards.group(2))), num(r.get("guards_ratio")), ""));
        StringBuilder table = new StringBuilder("| figure | arrayd | anchor | ratio | goal |\n| --- | --- | --- | --- | --- |\n");
        for (String[] row : rows) {
            table.append("| ").append(String.join(" | ", row)).append(" |\n");
        }
        BarChart chart = new BarChart("arrayd on " + r.get("device").replace("\"", "") + ": arrayd / raw JCuda", "ratio",
                List.of("launch inline", "launch queued", "upload staged", "download staged", "upload locked",
                        "download locked", "IR tiled SGEMM", "guards kept"));
        chart.add("arrayd / anchor (launch and guards: time, lower is better; the rest: throughput, higher is better)",
                List.of(launchInline / launchRaw, launchQueued / launchRaw, num(r.get("h2d_ratio")), num(r.get("d2h_ratio")),
                        num(r.get("locked_h2d_ratio")), num(r.get("locked_d2h_ratio")), num(r.get("ir_matmul_of_native")),
                        num(r.get("guards_ratio"))));
        chart.writePng(dir.resolve("cuda.png"));

        StringBuilder sweepTable = new StringBuilder("| copy lanes | chunk | upload GB/s | download GB/s |\n| --- | --- | --- | --- |\n");
        Map<Integer, double[]> byLanes = new LinkedHashMap<>();
        Matcher sweep = SWEEP.matcher(bench);
        while (sweep.find()) {
            int lanes = Integer.parseInt(sweep.group(1));
            int chunk = Integer.parseInt(sweep.group(2));
            sweepTable.append(String.format(Locale.ROOT, "| %d | %d MiB | %s | %s |%n", lanes, chunk, sweep.group(3), sweep.group(4)));
            if (chunk == 4) {
                byLanes.put(lanes, new double[] {num(sweep.group(3)), num(sweep.group(4))});
            }
        }
        if (byLanes.size() < 2) {
            throw new IllegalArgumentException("--from: " + from.resolve("bench.txt") + ": fewer than two 'transfer sweep' lines "
                    + "with 4 MiB chunks (expected: the kit's sweep of copy lanes)");
        }
        double[] lanes = byLanes.keySet().stream().mapToDouble(Integer::doubleValue).toArray();
        LineChart sweepChart = new LineChart("staged 256 MiB transfers on " + r.get("device").replace("\"", "")
                + " by copy lanes (4 MiB staging chunks)", "copy lanes", "GB/s")
                .add("upload", lanes, byLanes.values().stream().mapToDouble(v -> v[0]).toArray())
                .add("download", lanes, byLanes.values().stream().mapToDouble(v -> v[1]).toArray())
                .reference(num(r.get("raw_upload_GBps")), "raw pinned cuMemcpy");
        sweepChart.writePng(dir.resolve("sweep.png"));

        String section = String.format(Locale.ROOT, """
                The CUDA backend on a GPU, measured by the GPU check kit's benchmark (`CudaBench`, in one process \
                on `cuda:0`, each figure side by side with raw JCuda on the same device, five rounds alternating, \
                medians). GPU: %s; NVRTC: %s. Kit run (all of `run.sh`, the suites and demos included): %s.

                %s
                ![arrayd / raw JCuda](cuda.png)

                Staged transfers by copy lanes and staging chunk size (the same 256 MiB through a backend of each \
                setting, medians of five; uploads move half a chunk per copy):

                %s
                ![sweep](sweep.png)
                """, gpu, nvrtc, line(summary, "RESULT gpu-check ").orElse("?").trim(), table, sweepTable);
        Files.writeString(dir.resolve(RunFiles.SECTION), section);
        Files.writeString(dir.resolve(RunFiles.RESULT), resultLine + "\n");
        Files.writeString(dir.resolve(RunFiles.COMMAND), "OUT=<dir> gpu-kit/target/gpu-kit/run.sh   # on the GPU machine\n"
                + "bin/arrayd bench cuda --from <dir>\n");
        new Machine(host.group(1), Integer.parseInt(host.group(2)), host.group(3), host.group(4), "the kit's jlink'ed Java "
                + java.group(2), date.group(1), "none: CudaBench in-process on cuda:0 (" + gpu + ")").write(dir.resolve(RunFiles.MACHINE));
        progress.clear();
        stdout.println("results: " + dir);
        stdout.println(resultLine);
        stdout.flush();
        return BenchMain.EXIT_OK;
    }

    private String read(String file) throws IOException {
        Path p = from.resolve(file);
        if (!Files.isRegularFile(p)) {
            throw new IllegalArgumentException("--from: " + from + " has no " + file + " (expected: the folder run.sh wrote)");
        }
        return Files.readString(p);
    }

    private Matcher find(Pattern pattern, String text, String file, String expected) {
        Matcher m = pattern.matcher(text);
        if (!m.find()) {
            throw new IllegalArgumentException("--from: " + from.resolve(file) + " has no line like \"" + expected + "\"");
        }
        return m;
    }

    private static java.util.Optional<String> line(String text, String prefix) {
        return text.lines().filter(l -> l.startsWith(prefix)).map(l -> l.substring(prefix.length())).findFirst();
    }

    static Map<String, String> keyValues(String resultLine) {
        Map<String, String> m = new LinkedHashMap<>();
        Matcher kv = KEY_VALUE.matcher(resultLine);
        while (kv.find()) {
            m.put(kv.group(1), kv.group(2));
        }
        return m;
    }

    private static double num(String s) {
        if (s == null) {
            throw new IllegalArgumentException("a figure is missing from the RESULT cuda line");
        }
        return Double.parseDouble(s);
    }

    private static String[] row(String figure, String arrayd, String anchor, double ratio, String goal) {
        return new String[] {figure, arrayd, anchor, String.format(Locale.ROOT, "%.2f", ratio), goal};
    }

    private static String us(double micros) {
        return String.format(Locale.ROOT, "%.1f µs", micros);
    }

    private static String gbps(Map<String, String> r, String key) {
        return String.format(Locale.ROOT, "%.1f GB/s", num(r.get(key)));
    }

    private static String gflops(String value) {
        return String.format(Locale.ROOT, "%.0f GFLOP/s", num(value));
    }
}
