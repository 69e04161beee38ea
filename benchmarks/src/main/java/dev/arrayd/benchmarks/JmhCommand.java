package dev.arrayd.benchmarks;

import java.io.BufferedWriter;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bench jmh}: the JMH micro-benchmarks of the hot paths ({@code dev.arrayd.benchmarks.jmh}:
 * scheduler per command, dependency tracking, slab pool, events), short runs, one fork; writes a table.
 */
@Command(name = "jmh", sortOptions = false,
        description = {"JMH micro-benchmarks of the hot paths (scheduler submit+track+dispatch+complete on a no-op "
                + "device, dependency tracking, slab alloc/free, event signal/wait), a few seconds each.",
                "Writes jmh.csv and jmh.txt into the results folder; the last line of stdout is: RESULT jmh "
                        + "<benchmark>_ns=<score> ..."})
final class JmhCommand implements Tool {

    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");
    // the options' defaults, which the command written with a run leaves out
    private static final String ALL = ".*";
    private static final String FORKS = "1";
    private static final String WARMUP_MS = "1000";
    private static final String MEASURE_MS = "1000";
    private static final String MEASUREMENTS = "3";

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    boolean help;

    @Option(names = "--out", paramLabel = "DIR",
            description = "Results folder; default results/jmh-<yyyyMMdd-HHmmss> under the current directory.")
    Path out;

    @Option(names = "--filter", paramLabel = "REGEX", defaultValue = ALL,
            description = "Only benchmarks whose Class.method matches (default: all).")
    String filter;

    @Option(names = "--forks", paramLabel = "N", defaultValue = FORKS,
            description = "JMH forks; 0 runs in this JVM (default: ${DEFAULT-VALUE}).")
    int forks;

    @Option(names = "--warmup-ms", paramLabel = "MS", defaultValue = WARMUP_MS,
            description = "One warm-up iteration of this long; 0 = none (default: ${DEFAULT-VALUE}).")
    int warmupMillis;

    @Option(names = "--measure-ms", paramLabel = "MS", defaultValue = MEASURE_MS,
            description = "Length of each measured iteration (default: ${DEFAULT-VALUE}).")
    int measureMillis;

    @Option(names = "--measurements", paramLabel = "N", defaultValue = MEASUREMENTS,
            description = "Measured iterations (default: ${DEFAULT-VALUE}).")
    int measurements;

    /** The command that repeats this run: the flags that differ from their defaults (not {@code --out}). */
    String command() {
        StringBuilder c = new StringBuilder("bin/arrayd bench jmh");
        if (!ALL.equals(filter)) {
            c.append(" --filter '").append(filter).append('\'');
        }
        flag(c, "--forks", forks, FORKS);
        flag(c, "--warmup-ms", warmupMillis, WARMUP_MS);
        flag(c, "--measure-ms", measureMillis, MEASURE_MS);
        flag(c, "--measurements", measurements, MEASUREMENTS);
        return c.toString();
    }

    private static void flag(StringBuilder c, String name, int value, String byDefault) {
        if (!Integer.toString(value).equals(byDefault)) {
            c.append(' ').append(name).append(' ').append(value);
        }
    }

    @Override
    public int run(PrintStream stdout, Progress progress) throws Exception {
        Path dir = out != null ? out : Path.of("results", "jmh-" + LocalDateTime.now().format(STAMP));
        Files.createDirectories(dir);
        ChainedOptionsBuilder o = new OptionsBuilder()
                .include("dev\\.arrayd\\.benchmarks\\.jmh\\.(" + filter + ")")
                .forks(forks)
                .warmupIterations(warmupMillis > 0 ? 1 : 0)
                .warmupTime(TimeValue.milliseconds(Math.max(1, warmupMillis)))
                .measurementIterations(measurements)
                .measurementTime(TimeValue.milliseconds(measureMillis))
                .jvmArgsAppend("--enable-native-access=ALL-UNNAMED")
                .addProfiler(org.openjdk.jmh.profile.GCProfiler.class)
                .verbosity(progress.interactive() ? VerboseMode.NORMAL : VerboseMode.SILENT)
                .result(dir.resolve("jmh.json").toString())
                .resultFormat(org.openjdk.jmh.results.format.ResultFormatType.JSON);
        progress.line("jmh: running " + filter + " (" + forks + " fork(s), " + measurements + " x " + measureMillis
                + " ms each)");
        Collection<RunResult> results = new Runner(o.build()).run();
        if (results.isEmpty()) {
            throw new IllegalArgumentException("--filter: \"" + filter + "\" matches no benchmark");
        }
        List<RunResult> sorted = new ArrayList<>(results);
        sorted.sort((a, b) -> a.getParams().getBenchmark().compareTo(b.getParams().getBenchmark()));
        List<String> lines = new ArrayList<>();
        StringBuilder result = new StringBuilder();
        StringBuilder table = new StringBuilder();
        lines.add(String.format(Locale.ROOT, "%-44s %12s %10s  %-6s %10s", "benchmark", "score", "error", "unit", "B/op"));
        List<String> names = new ArrayList<>();
        List<Double> scores = new ArrayList<>();
        try (BufferedWriter w = Files.newBufferedWriter(dir.resolve("jmh.csv"))) {
            w.write("benchmark,score,error,unit,samples,bytes_per_op\n");
            for (RunResult r : sorted) {
                String name = shortName(r.getParams().getBenchmark());
                Result<?> p = r.getPrimaryResult();
                double err = Double.isNaN(p.getScoreError()) ? 0 : p.getScoreError();
                Result<?> alloc = r.getSecondaryResults().get("gc.alloc.rate.norm");
                double bytes = alloc == null ? Double.NaN : alloc.getScore();
                w.write(String.format(Locale.ROOT, "%s,%.3f,%.3f,%s,%d,%.1f%n", name, p.getScore(), err, p.getScoreUnit(),
                        p.getSampleCount(), bytes));
                lines.add(String.format(Locale.ROOT, "%-44s %12.1f %10.1f  %-6s %10.1f", name, p.getScore(), err,
                        p.getScoreUnit(), bytes));
                result.append(name.replace('.', '_')).append("_ns=")
                        .append(String.format(Locale.ROOT, "%.1f", p.getScore())).append(' ');
                table.append(String.format(Locale.ROOT, "| `%s` | %.1f | ± %.1f | %.0f |%n", name, p.getScore(), err, bytes));
                names.add(name);
                scores.add(p.getScore());
            }
        }
        BarChart chart = new BarChart("arrayd JMH: average time per operation", "ns/op", names);
        chart.add("ns/op", scores);
        chart.writePng(dir.resolve("jmh.png"));
        lines.add("results: " + dir);
        Files.write(dir.resolve("jmh.txt"), lines);
        String res = result.toString().trim();
        String section = String.format(Locale.ROOT, """
                JMH (%s, %s warm-up, %d x %d ms measured, average time per operation) of the hot paths, \
                in-process on devices of the null backend (`devices/null`), which complete commands at once without \
                computing (or hold them until released, for pending dependencies), so what is measured is arrayd's \
                own bookkeeping:

                - `SchedulerBench`: one empty launch through `Scheduler.submit` (validate, register the event, \
                order on its stream, fast-path dispatch, complete), alone and per command in batches of 64;
                - `DependencyBench`: per command of a 64-long chain submitted while pending, then released: \
                waits plus read-after-write / write-after-write hazards on one buffer, or a fan-in of 4 waits;
                - `SlabPoolBench`: allocate + free of one block (64 B..128 KiB), empty pool and 8192 blocks with holes;
                - `EventBench`: signal an event with one or three listeners; signal and join its future;
                - `MultiDeviceBench`: two devices: one launch naming no device on a buffer (placement over both \
                devices, the replica check, hazards, dispatch, completion), and per command of a recorded \
                64-launch graph replayed without validation.

                Bytes allocated per operation are JMH's `gc.alloc.rate.norm`.

                | benchmark | ns/op | error (99.9%%) | B/op |
                | --- | --- | --- | --- |
                %s
                ![jmh](jmh.png)
                """, forks == 1 ? "1 fork" : forks + " forks", warmupMillis > 0 ? warmupMillis + " ms" : "no", measurements,
                measureMillis, table);
        Files.writeString(dir.resolve(RunFiles.RESULT), "RESULT jmh " + res + "\n");
        Files.writeString(dir.resolve(RunFiles.COMMAND), command() + "\n");
        Files.writeString(dir.resolve(RunFiles.SECTION), section);
        Machine.describe("none (in-process, no daemon)").write(dir.resolve(RunFiles.MACHINE));
        progress.clear();
        lines.forEach(stdout::println);
        stdout.println("RESULT jmh " + res);
        stdout.flush();
        return BenchMain.EXIT_OK;
    }

    /** {@code dev.arrayd.benchmarks.jmh.SlabPoolBench.allocFreeEmpty} → {@code SlabPoolBench.allocFreeEmpty}. */
    private static String shortName(String benchmark) {
        String prefix = "dev.arrayd.benchmarks.jmh.";
        return benchmark.startsWith(prefix) ? benchmark.substring(prefix.length()) : benchmark;
    }
}
