package dev.arrayd.benchmarks;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import io.grpc.ManagedChannel;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code bench python}: the Python client's figures against their anchors, in rounds. Each round runs
 * {@code client-python/bench/bench.py} in the Python client's build environment (an empty kernel's round trip
 * vs a raw grpcio echo, pipelined launches, transfers vs raw grpcio streaming, and shared memory vs a NumPy
 * memcpy) in two parts (launches, then transfers) and, just before and just after its launches, client-java's
 * pipelined launches of the same kernel on the same daemon.
 */
@Command(name = "python", sortOptions = false,
        description = {"The Python client against raw grpcio on the same channel and against client-java, in rounds: "
                + "launch round trip vs echo, pipelined launches vs client-java's, transfers vs raw byte streaming, "
                + "and shared memory vs memcpy (needs the client's build: ./mvnw -q -pl client-python -am package).",
                "Writes python.csv (every round), python.png and the RESULT line: RESULT python launch_ratio=.. "
                        + "throughput_of_java=.. upload_of_raw=.. download_of_raw=.. download_out_of_raw=.. "
                        + "shm_upload_of_memcpy=.. "
                        + "shm_download_of_memcpy=.. shm_download_out_of_memcpy=.. region_upload_of_memcpy=.. "
                        + "region_download_of_memcpy=..",
                "--iterations is the number of rounds (default " + PythonScenario.DEFAULT_ROUNDS + ")."})
final class PythonScenario implements Scenario {

    static final int DEFAULT_ROUNDS = 5;
    private JitWarmUp.Result warm;
    private static final Pattern FIELD = Pattern.compile("\"([a-zA-Z_]+)\": ([0-9.eE+-]+)");

    @Mixin
    BenchOptions options = new BenchOptions();

    @Option(names = "--python", paramLabel = "PATH", defaultValue = "client-python/target/venv/bin/python",
            description = "The Python with the client installed (default: ${DEFAULT-VALUE}, made by the client's build).")
    Path python;

    @Option(names = "--script", paramLabel = "PATH", defaultValue = "client-python/bench/bench.py", hidden = true,
            description = "The Python side (default: ${DEFAULT-VALUE}; for tests run from elsewhere).")
    Path script;

    @Option(names = "--size", paramLabel = "MIB", defaultValue = "256",
            description = "MiB per transfer (default: ${DEFAULT-VALUE}).")
    int sizeMib;

    @Option(names = "--launches", paramLabel = "N", defaultValue = "50000",
            description = "Pipelined launches per round and client (default: ${DEFAULT-VALUE}).")
    int launches;

    @Option(names = "--round-trips", paramLabel = "N", defaultValue = "2000",
            description = "Launch and echo round trips per round (default: ${DEFAULT-VALUE}).")
    int roundTrips;

    @Option(names = "--window", paramLabel = "W", defaultValue = "1024",
            description = "Most launches unanswered at a time, for both clients (default: ${DEFAULT-VALUE}).")
    int window;

    @Spec
    CommandSpec spec;

    @Override
    public String name() {
        return "python";
    }

    @Override
    public BenchOptions options() {
        return options;
    }

    @Override
    public Report run(BenchContext ctx) throws Exception {
        int rounds = options.iterations(DEFAULT_ROUNDS);
        if (!Files.isExecutable(python) || !Files.isRegularFile(script)) {
            throw new ParameterException(spec.commandLine(), "--python: " + python + (Files.isExecutable(python) ? ""
                    : " (not found)") + " with " + script + " (expected: the Python client's build, from the repository "
                    + "root: ./mvnw -q -pl client-python -am package -DskipTests)");
        }
        if (launches <= 0 || roundTrips <= 0 || sizeMib <= 0 || window <= 0) {
            throw new ParameterException(spec.commandLine(), "--launches, --round-trips, --size and --window must be > 0");
        }
        Progress progress = ctx.progress();
        List<Map<String, Double>> python = new ArrayList<>();
        // client-java's launches per second just before and just after each round's Python launches
        double[][] javaAround = new double[rounds][];
        ManagedChannel channel = Channels.open(ctx);
        String device;
        try (ArraydClient client = ArraydClient.builder().channel(channel).build();
             Session session = client.openSession("bench-python-java").get(30, TimeUnit.SECONDS)) {
            device = LatencyScenario.cpuDevice(client.devices().get(30, TimeUnit.SECONDS));
            KernelHandle empty = session.compile(LatencyScenario.emptyKernel()).get(60, TimeUnit.SECONDS).get("empty");
            Launch one = Launch.of(empty).global(1).device(device);
            RoundTrip launch = () -> session.launch(one).future();
            progress.update("python: warming up client-java");
            Pipeline.run(launch, Math.max(1, launches / 4), window);
            // the daemon's paths for this client (batches, completions, chunked transfers) compile in its first
            // rounds: short rounds of both clients until the JITs are quiet
            warm = JitWarmUp.run(progress, "python: both clients", List.of(channel), List.of(), options.warmup(2),
                    options.warmupLimit(), () -> {
                        runPython(ctx, script, "all", Math.max(1, roundTrips / 4), Math.max(1, launches / 4),
                                Math.min(16, sizeMib));
                        Pipeline.run(launch, Math.max(1, launches / 4), window);
                    });
            progress.line("python: " + warm.describe());
            for (int r = 0; r < rounds; r++) {
                // client-java's rate just before and just after the Python client's (this VM's speed moves within
                // seconds): the Python rate is paired with their mean
                String round = "python: round " + (r + 1) + "/" + rounds;
                progress.update(round + ": client-java, " + launches + " launches");
                double before = launches / (Pipeline.run(launch, launches, window) / 1e9);
                progress.update(round + ": the Python client's launches");
                Map<String, Double> p = runPython(ctx, script, "launches", roundTrips, launches, sizeMib);
                progress.update(round + ": client-java, " + launches + " launches");
                double after = launches / (Pipeline.run(launch, launches, window) / 1e9);
                javaAround[r] = new double[] {before, after};
                progress.update(round + ": the Python client's transfers");
                p.putAll(runPython(ctx, script, "transfers", roundTrips, launches, sizeMib));
                python.add(p);
                progress.line(String.format(Locale.ROOT, "python: round %d/%d: launch %.0f us (echo %.0f), %,.0f launches/s "
                                + "(%.1f us of CPU each; client-java %,.0f and %,.0f), up %.0f MB/s (raw %.0f), down %.0f "
                                + "MB/s (raw %.0f)", r + 1, rounds, p.get("launch_us"), p.get("echo_us"),
                        p.get("launches_per_s"), p.get("launch_cpu_us"), before, after, p.get("upload_MBps"),
                        p.get("sink_MBps"), p.get("download_MBps"), p.get("source_MBps")));
            }
        }
        progress.clear();
        double[] javaRate = Arrays.stream(javaAround).mapToDouble(a -> (a[0] + a[1]) / 2).toArray();
        Map<String, Double> med = new LinkedHashMap<>();
        for (String key : python.getFirst().keySet()) {
            med.put(key, ThroughputScenario.median(python.stream().mapToDouble(m -> m.get(key)).toArray()));
        }
        med.put("java_launches_per_s", ThroughputScenario.median(javaRate));
        boolean shm = med.containsKey("memcpy_MBps");
        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("python.csv"))) {
            w.write("figure,round,value\n");
            for (int r = 0; r < rounds; r++) {
                for (Map.Entry<String, Double> e : python.get(r).entrySet()) {
                    w.write(String.format(Locale.ROOT, "%s,%d,%.3f%n", e.getKey(), r + 1, e.getValue()));
                }
                w.write(String.format(Locale.ROOT, "java_launches_per_s,%d,%.3f%n", r + 1, javaRate[r]));
                w.write(String.format(Locale.ROOT, "java_launches_before_per_s,%d,%.3f%n", r + 1, javaAround[r][0]));
                w.write(String.format(Locale.ROOT, "java_launches_after_per_s,%d,%.3f%n", r + 1, javaAround[r][1]));
            }
        }
        // every ratio pairs figures of the same round (the VM's speed moves between rounds), then takes the median
        double launchRatio = pairedMedian(python, "launch_us", "echo_us");
        double[] ofJavaByRound = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            ofJavaByRound[r] = python.get(r).get("launches_per_s") / javaRate[r];
        }
        double ofJava = ThroughputScenario.median(ofJavaByRound);
        double up = pairedMedian(python, "upload_MBps", "sink_MBps");
        double down = pairedMedian(python, "download_MBps", "source_MBps");
        double downOut = pairedMedian(python, "download_out_MBps", "source_out_MBps");
        double shmUp = shm ? pairedMedian(python, "staged_upload_MBps", "memcpy_MBps") : Double.NaN;
        double shmDown = shm ? pairedMedian(python, "staged_download_MBps", "memcpy_MBps") : Double.NaN;
        double shmDownOut = shm ? pairedMedian(python, "staged_download_out_MBps", "memcpy_MBps") : Double.NaN;
        double regionUp = shm ? pairedMedian(python, "region_upload_MBps", "memcpy_MBps") : Double.NaN;
        double regionDown = shm ? pairedMedian(python, "region_download_MBps", "memcpy_MBps") : Double.NaN;
        List<String> cats = new ArrayList<>(List.of("echo / launch round trip", "launches/s of client-java's",
                "upload of raw grpcio", "download of raw grpcio", "download into an array of raw grpcio"));
        List<Double> values = new ArrayList<>(List.of(1 / launchRatio, ofJava, up, down, downOut));
        List<Double> goals = new ArrayList<>(List.of(1 / 1.3, 0.5, 0.9, 0.9, 0.9));
        if (shm) {
            cats.addAll(List.of("staged upload of memcpy", "staged download of memcpy",
                    "staged download into an array of memcpy", "region upload of memcpy", "region download of memcpy"));
            values.addAll(List.of(shmUp, shmDown, shmDownOut, regionUp, regionDown));
            goals.addAll(List.of(0.5, 0.5, 0.5, 0.5, 0.5));
        }
        new BarChart(String.format(Locale.ROOT, "arrayd's Python client against its anchors on %s (median of %d rounds)",
                device, rounds), "ratio (higher is better)", cats)
                .add("Python client", values)
                .add("goal", goals)
                .writePng(ctx.outDir().resolve("python.png"));

        String result = String.format(Locale.ROOT, "launch_ratio=%.2f throughput_of_java=%.3f upload_of_raw=%.2f "
                + "download_of_raw=%.2f download_out_of_raw=%.2f", launchRatio, ofJava, up, down, downOut)
                + (shm ? String.format(Locale.ROOT, " shm_upload_of_memcpy=%.2f shm_download_of_memcpy=%.2f "
                + "shm_download_out_of_memcpy=%.2f region_upload_of_memcpy=%.2f region_download_of_memcpy=%.2f", shmUp,
                shmDown, shmDownOut, regionUp, regionDown) : "");
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "python: %s daemon at %s, device %s, %d rounds", ctx.inProcess()
                ? "in-process" : "separate-process", ctx.target(), device, rounds));
        med.forEach((k, v) -> lines.add(String.format(Locale.ROOT, "%-24s %14.1f", k, v)));
        lines.add("results: " + ctx.outDir());
        String section = String.format(Locale.ROOT, """
                What is measured, in %d rounds, after shorter rounds of the same as a warm-up (%s): each round runs \
                client-java's pipelined launches, `client-python/bench/bench.py`'s (the client from its wheel, in the \
                build's virtual environment) pipelined launches and round trips, client-java's pipelined launches \
                again, then `bench.py`'s transfers, one after the other against the daemon:

                - **round trip:** an empty IR kernel launched on %s (`global = [1]`) and waited for, %d times, \
                against a 16-byte `DiagnosticsService.Echo` on the same channel sent and answered the same way \
                (a request queue feeding a gRPC request iterator), alternating; medians;
                - **pipelined launches:** %,d launches of that kernel with at most %d unanswered, by the Python \
                client and by client-java (the Python client's rate against the mean of client-java's just before \
                and just after it; the Python process's CPU time per launch meanwhile is `launch_cpu_us` in \
                python.csv, a median of %.1f µs here);
                - **transfers:** %d MiB with `Buffer.write` (Upload commands of 1 MiB on the session stream, one \
                per message) and `Buffer.numpy` (Download commands of 8 MiB, eight outstanding, their data in \
                messages of 2 MiB; into a new array, then again into that array with `numpy(out=)`) against raw \
                grpcio streaming of the same bytes to `DiagnosticsService.Sink` (1 MiB messages) and from `Source` \
                (2 MiB messages; into a new array, then into that one), after 64 MiB each way untimed;
                - **same host:** over the daemon's Unix socket, the same arrays through the session's 64 MiB \
                staging region (what `write` and `numpy` do there, after one warm-up write that maps it: a buffer \
                on cpu:0 streams through its ring of eight 1 MiB slots; the \
                download into a new array, then again into that array with `numpy(out=)`, whose pages are touched \
                as the memcpy anchor's are; a new array of a size the session has read before comes from its pool \
                of regions instead, which the daemon downloads into directly, the region of the array before \
                taken again once that array is freed: the size is read twice, untimed, first, as a loop that \
                reads into new arrays would have) and \
                through a region of their size (`Region.upload` / `download`; filling it is not timed, and one \
                transfer each way goes first, untimed, so that the daemon has touched the region's pages as the \
                memcpy anchor's destination is touched), against a NumPy memcpy of the same size.

                In a round each transfer figure but a region's is the median of three transfers that alternate with \
                three of its anchor (A B, B A, A B), each into a new array where it reads into one (the one before \
                freed first): the VM's speed, and what first touching a new array's pages costs, move by up to 3× \
                from one transfer to the next. The table gives each figure's median over the rounds; each ratio is the median of the rounds' \
                ratios (a figure against its anchor of the same round: the VM's speed moves between rounds). The \
                Python process runs with glibc's `MALLOC_MMAP_THRESHOLD_=%d` and `MALLOC_TRIM_THRESHOLD_=%d`, so \
                that the 1 MiB messages of either side reuse their pages rather than have glibc hand them back to \
                the kernel and fault them in again (which at times ran a transfer or its anchor at a third of its \
                speed).

                | figure | Python client | anchor | ratio | goal |
                | --- | --- | --- | --- | --- |
                | launch round trip | %.0f µs | echo %.0f µs | **%.2f×** | ≤ 1.3× |
                | pipelined launches | %,.0f /s | client-java %,.0f /s | **%.3f** | ≥ 0.5 |
                | upload %d MiB | %.0f MB/s | Sink %.0f MB/s | **%.2f** | ≥ 0.9 |
                | download %d MiB | %.0f MB/s | Source %.0f MB/s | **%.2f** | ≥ 0.9 |
                | download %d MiB into an existing array (`numpy(out=)`) | %.0f MB/s | Source %.0f MB/s | **%.2f** | ≥ 0.9 |
                %s
                ![the Python client against its anchors](python.png)
                """, rounds, warm.describe(), device, roundTrips, launches, window, med.get("launch_cpu_us"), sizeMib,
                MALLOC_MMAP_THRESHOLD, MALLOC_TRIM_THRESHOLD, med.get("launch_us"), med.get("echo_us"),
                launchRatio, med.get("launches_per_s"), med.get("java_launches_per_s"), ofJava, sizeMib,
                med.get("upload_MBps"), med.get("sink_MBps"), up, sizeMib, med.get("download_MBps"),
                med.get("source_MBps"), down, sizeMib, med.get("download_out_MBps"), med.get("source_out_MBps"), downOut,
                shm ? String.format(Locale.ROOT, """
                | staged upload (Unix socket) | %.0f MB/s | memcpy %.0f MB/s | **%.2f** | ≥ 0.5 |
                | staged download (Unix socket) | %.0f MB/s | memcpy | **%.2f** | ≥ 0.5 |
                | staged download into an existing array (`numpy(out=)`) | %.0f MB/s | memcpy | **%.2f** | ≥ 0.5 |
                | region upload | %.0f MB/s | memcpy | **%.2f** | ≥ 0.5 |
                | region download | %.0f MB/s | memcpy | **%.2f** | ≥ 0.5 |
                """, med.get("staged_upload_MBps"), med.get("memcpy_MBps"), shmUp, med.get("staged_download_MBps"), shmDown,
                med.get("staged_download_out_MBps"), shmDownOut,
                med.get("region_upload_MBps"), regionUp, med.get("region_download_MBps"), regionDown) : "");
        return new Report(lines, result, section);
    }

    /** The median over rounds of {@code figure / anchor} within each round. */
    static double pairedMedian(List<Map<String, Double>> rounds, String figure, String anchor) {
        return ThroughputScenario.median(rounds.stream().mapToDouble(m -> m.get(figure) / m.get(anchor)).toArray());
    }

    /**
     * One run of the Python side ({@code part}: all, launches or transfers); its figures from the JSON object on
     * its last line.
     */
    /** Allocations from this size on get pages of their own (the NumPy arrays); smaller ones come from the heap. */
    static final long MALLOC_MMAP_THRESHOLD = 64L << 20;
    /** Free heap the Python process keeps instead of giving it back to the kernel. */
    static final long MALLOC_TRIM_THRESHOLD = 1L << 30;

    private Map<String, Double> runPython(BenchContext ctx, Path script, String part, int trips, int count, int mib)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(python.toString(), script.toString(), "--target", ctx.target(),
                "--part", part, "--latency", Integer.toString(trips), "--launches", Integer.toString(count),
                "--window", Integer.toString(window), "--mib", Integer.toString(mib)));
        if (ctx.unixSocket() != null) {
            cmd.addAll(List.of("--unix", "unix://" + ctx.unixSocket()));
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
        // glibc otherwise hands the pages of freed 1 MiB messages back to the kernel at times, and the next
        // message faults them in again: a transfer (or its anchor) then runs at a third of its speed, by luck of
        // the process's history. Kept in the heap, both sides' messages reuse their pages (MALLOC_* of mallopt(3))
        pb.environment().putIfAbsent("MALLOC_MMAP_THRESHOLD_", Long.toString(MALLOC_MMAP_THRESHOLD));
        pb.environment().putIfAbsent("MALLOC_TRIM_THRESHOLD_", Long.toString(MALLOC_TRIM_THRESHOLD));
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("bench.py exited with " + p.exitValue() + ": " + out);
        }
        String last = out.substring(out.lastIndexOf('\n') + 1);
        Map<String, Double> figures = new LinkedHashMap<>();
        Matcher m = FIELD.matcher(last);
        while (m.find()) {
            figures.put(m.group(1), Double.parseDouble(m.group(2)));
        }
        if (!figures.containsKey(part.equals("transfers") ? "upload_MBps" : "launch_us")) {
            throw new IllegalStateException("bench.py --part " + part + " printed no figures of it: " + last);
        }
        return figures;
    }
}
