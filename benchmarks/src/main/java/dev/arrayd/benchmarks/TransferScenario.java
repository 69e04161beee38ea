package dev.arrayd.benchmarks;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.BufferOptions;
import dev.arrayd.client.CommandOptions;
import dev.arrayd.client.DType;
import dev.arrayd.client.Access;
import dev.arrayd.client.Ir;
import dev.arrayd.client.IrKernelSpec;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.MappedRegion;
import dev.arrayd.client.MemoryMode;
import dev.arrayd.client.Session;
import io.grpc.ManagedChannel;
import java.io.BufferedWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code bench transfer}: upload and download bandwidth through client-java ({@code Session.write} /
 * {@code Session.read}, which travel the session stream as chunked Upload / Download commands) next to
 * raw gRPC byte streaming on the same channel and server stack ({@code DiagnosticsService.Sink} /
 * {@code Source}, chunks of the same size as the client's) and an in-process memcpy (heap array to
 * off-heap memory and back: the ceiling of any copy on this machine).
 *
 * <p>Each round moves {@code --size} bytes once with every method, in an order that rotates per round,
 * so drift lands on all of them.
 */
@Command(name = "transfer", sortOptions = false,
        description = {"Upload and download bandwidth through client-java versus raw gRPC byte streaming on the same "
                + "server stack (DiagnosticsService.Sink/Source) and an in-process memcpy, alternating in rounds.",
                "Writes transfer.csv (every transfer), summary.csv and transfer.png into the results folder; the "
                        + "last line of stdout is: RESULT transfer upload_MBps=.. sink_MBps=.. upload_ratio=.. "
                        + "download_MBps=.. source_MBps=.. download_ratio=.. memcpy_MBps=..",
                "When the daemon listens on a Unix socket (the one the benchmark starts does) it also moves the bytes "
                        + "through shared-memory regions (region_upload / region_download) and through Session.write / "
                        + "read over the socket (staged_write / staged_read), and times buffers that live "
                        + "in a region made current for a launch without a copy (zero_copy.csv, zero_copy.png; "
                        + "zero_copy_* fields on the RESULT line).",
                "--iterations is the number of rounds (default " + TransferScenario.DEFAULT_ROUNDS + "), --warmup the "
                        + "transfers of each method before them (default " + TransferScenario.DEFAULT_WARMUP + ")."})
final class TransferScenario implements Scenario {

    static final int DEFAULT_ROUNDS = 8;
    static final int DEFAULT_WARMUP = 3;
    /** Chunk sizes of client-java's write and read paths; the Sink anchor uses the same. */
    static final int UPLOAD_CHUNK = Session.MAX_UPLOAD_BYTES;
    static final int DOWNLOAD_CHUNK = 8 << 20;
    /** The Source anchor's chunks: its largest. */
    static final int SOURCE_CHUNK = 4 << 20;

    static final String UPLOAD = "upload";
    static final String SINK = "sink";
    static final String DOWNLOAD = "download";
    static final String SOURCE = "source";
    static final String MEMCPY_IN = "memcpy_in";
    static final String MEMCPY_OUT = "memcpy_out";
    static final String REGION_UPLOAD = "region_upload";
    static final String REGION_DOWNLOAD = "region_download";
    static final String STAGED_WRITE = "staged_write";
    static final String STAGED_READ = "staged_read";
    static final List<String> TCP_METHODS = List.of(UPLOAD, SINK, DOWNLOAD, SOURCE, MEMCPY_IN, MEMCPY_OUT);
    /** Prefix of the zero-copy methods: a buffer living in a region made current for a launch, per size. */
    static final String ZERO_COPY = "zero_copy_";
    static final String ZERO_COPY_DOWNLOAD = "zero_copy_download";
    /** Sizes of the zero-copy buffers (those up to --size, and --size itself). */
    static final long[] ZERO_COPY_SIZES = {1L << 20, 16L << 20, 256L << 20};
    /** Zero-copy operations timed per method and round (their median is the round's figure): each is short. */
    static final int ZERO_COPY_REPS = 21;

    @Mixin
    BenchOptions options = new BenchOptions();

    @Option(names = "--size", paramLabel = "MIB", defaultValue = "64",
            description = "MiB moved per transfer (default: ${DEFAULT-VALUE}).")
    int sizeMib;

    @Option(names = "--size-bytes", paramLabel = "BYTES", hidden = true,
            description = "Bytes moved per transfer, overriding --size (for tests).")
    Integer sizeBytes;

    @Spec
    CommandSpec spec;

    @Override
    public String name() {
        return "transfer";
    }

    @Override
    public BenchOptions options() {
        return options;
    }

    @Override
    public Report run(BenchContext ctx) throws Exception {
        int rounds = options.iterations(DEFAULT_ROUNDS);
        int warmup = options.warmup(DEFAULT_WARMUP);
        long sizeL = sizeBytes != null ? sizeBytes : (long) sizeMib << 20;
        if (sizeL <= 0 || sizeL > 1L << 30) {
            throw new ParameterException(spec.commandLine(), "--size: " + sizeL + " bytes (expected: 1 byte to 1 GiB)");
        }
        int size = (int) sizeL;
        Progress progress = ctx.progress();
        progress.update("transfer: connecting to " + ctx.target());
        byte[] data = new byte[size];
        ThreadLocalRandom.current().nextBytes(data);
        byte[] back = new byte[size];
        // through shared-memory regions when the daemon listens on a Unix socket (the benchmark started it)
        boolean regions = ctx.unixSocket() != null;
        List<String> methodNames = new ArrayList<>(TCP_METHODS);
        List<Long> zeroSizes = new ArrayList<>();
        if (regions) {
            methodNames.addAll(List.of(REGION_UPLOAD, REGION_DOWNLOAD, STAGED_WRITE, STAGED_READ));
            for (long z : ZERO_COPY_SIZES) {
                if (z < size && z % 4 == 0) {
                    zeroSizes.add(z);
                }
            }
            if (size % 4 == 0) {
                zeroSizes.add((long) size);
            }
        }
        Map<String, double[]> micros = new LinkedHashMap<>();
        Map<String, double[]> mbps = new LinkedHashMap<>();
        for (String m : methodNames) {
            mbps.put(m, new double[rounds]);
        }
        ManagedChannel channel = Channels.open(ctx);
        String device;
        try (ArraydClient client = ArraydClient.builder().channel(channel).build();
             Session session = client.openSession("bench-transfer").get(30, TimeUnit.SECONDS);
             ArraydClient unixClient = regions ? ArraydClient.connect("unix://" + ctx.unixSocket()) : null;
             Session unixSession = regions ? unixClient.openSession("bench-transfer-regions").get(30, TimeUnit.SECONDS)
                     : null;
             Arena arena = Arena.ofConfined()) {
            device = LatencyScenario.cpuDevice(client.devices().get(30, TimeUnit.SECONDS));
            BufferHandle buffer = session.createBuffer(DType.U8, new long[] {size},
                    BufferOptions.defaults().device(device)).get(30, TimeUnit.SECONDS);
            RawStreams raw = new RawStreams(channel);
            MemorySegment offHeap = arena.allocate(size, 64);
            Map<String, Transfer> methods = new LinkedHashMap<>();
            methods.put(UPLOAD, () -> session.write(buffer, data).future().get());
            methods.put(SINK, () -> raw.sink(data, UPLOAD_CHUNK).get());
            methods.put(DOWNLOAD, () -> {
                ByteBuffer b = session.read(buffer).get();
                if (b.remaining() != size) {
                    throw new IllegalStateException("read " + b.remaining() + " bytes (expected: " + size + ")");
                }
            });
            methods.put(SOURCE, () -> raw.source(back, SOURCE_CHUNK).get());
            methods.put(MEMCPY_IN, () -> MemorySegment.copy(MemorySegment.ofArray(data), 0, offHeap, 0, size));
            methods.put(MEMCPY_OUT, () -> MemorySegment.copy(offHeap, 0, MemorySegment.ofArray(back), 0, size));
            MappedRegion region = null;
            BufferHandle regionBuffer = null;
            BufferHandle stagedBuffer = null;
            MappedRegion zeroRegion = null;
            Map<String, Transfer> zeroMethods = new LinkedHashMap<>();
            if (regions) {
                progress.update("transfer: mapping a region of " + (size >> 20) + " MiB");
                MappedRegion rg = unixSession.createRegion(size).get(60, TimeUnit.SECONDS);
                BufferHandle rb = unixSession.createBuffer(DType.U8, new long[] {size},
                        BufferOptions.defaults().device(device)).get(30, TimeUnit.SECONDS);
                MemorySegment.copy(MemorySegment.ofArray(data), 0, rg.segment(), 0, size);
                methods.put(REGION_UPLOAD, () -> unixSession.upload(rb, 0, rg, 0, size, CommandOptions.defaults())
                        .future().get());
                methods.put(REGION_DOWNLOAD, () -> unixSession.download(rb, 0, 0, rg, 0, CommandOptions.defaults())
                        .future().get());
                region = rg;
                regionBuffer = rb;
                // what write and read do over the socket by themselves: through the session's staging region
                BufferHandle sb = unixSession.createBuffer(DType.U8, new long[] {size},
                        BufferOptions.defaults().device(device)).get(30, TimeUnit.SECONDS);
                methods.put(STAGED_WRITE, () -> unixSession.write(sb, data).future().get());
                methods.put(STAGED_READ, () -> {
                    ByteBuffer b = unixSession.read(sb).get();
                    if (b.remaining() != size) {
                        throw new IllegalStateException("read " + b.remaining() + " bytes (expected: " + size + ")");
                    }
                });
                stagedBuffer = sb;
                if (!zeroSizes.isEmpty()) {
                    zeroRegion = zeroCopy(unixSession, device, size, zeroSizes, zeroMethods, progress);
                }
            }

            for (int w = 0; w < warmup; w++) {
                for (Map.Entry<String, Transfer> m : methods.entrySet()) {
                    progress.update("transfer: warm-up " + (w + 1) + "/" + warmup + " " + m.getKey());
                    m.getValue().run();
                }
            }
            for (int w = 0; w < warmup; w++) {
                for (Map.Entry<String, Transfer> m : zeroMethods.entrySet()) {
                    progress.update("transfer: warm-up " + (w + 1) + "/" + warmup + " " + m.getKey());
                    for (int i = 0; i < ZERO_COPY_REPS; i++) {
                        m.getValue().run();
                    }
                }
            }
            // Check once that the bytes arrive intact: a fast wrong transfer is no result.
            byte[] check = session.readBytes(buffer).get(60, TimeUnit.SECONDS);
            if (!java.util.Arrays.equals(check, data)) {
                throw new IllegalStateException("the buffer read back differs from what was written");
            }
            if (regions) {
                byte[] viaRegion = unixSession.readBytes(regionBuffer).get(60, TimeUnit.SECONDS);
                if (!java.util.Arrays.equals(viaRegion, data)
                        || MemorySegment.mismatch(region.segment(), 0, size, MemorySegment.ofArray(data), 0, size) != -1) {
                    throw new IllegalStateException("the bytes through the region differ from what was written");
                }
                ByteBuffer staged = unixSession.read(stagedBuffer).get(60, TimeUnit.SECONDS);
                if (!staged.equals(ByteBuffer.wrap(data))) {
                    throw new IllegalStateException("the bytes written and read over the socket differ");
                }
            }
            if (zeroRegion != null && !(zeroRegion.segment().get(java.lang.foreign.ValueLayout.JAVA_FLOAT, 0) > 0)) {
                throw new IllegalStateException("the launches on buffers living in a region did not write the region");
            }
            List<String> order = new ArrayList<>(methods.keySet());
            for (int r = 0; r < rounds; r++) {
                for (int k = 0; k < order.size(); k++) {
                    String m = order.get((k + r) % order.size());
                    progress.update("transfer: round " + (r + 1) + "/" + rounds + " " + m + " " + (size >> 20) + " MiB");
                    long t0 = System.nanoTime();
                    methods.get(m).run();
                    long nanos = System.nanoTime() - t0;
                    mbps.get(m)[r] = size / (nanos / 1e9) / 1e6;
                    micros.computeIfAbsent(m, key -> new double[rounds])[r] = nanos / 1e3;
                }
                for (Map.Entry<String, Transfer> m : zeroMethods.entrySet()) {
                    progress.update("transfer: round " + (r + 1) + "/" + rounds + " " + m.getKey());
                    double[] reps = new double[ZERO_COPY_REPS];
                    for (int i = 0; i < reps.length; i++) {
                        long t0 = System.nanoTime();
                        m.getValue().run();
                        reps[i] = (System.nanoTime() - t0) / 1e3;
                    }
                    micros.computeIfAbsent(m.getKey(), key -> new double[rounds])[r] = ThroughputScenario.median(reps);
                }
                progress.line(String.format(Locale.ROOT, "transfer: round %d/%d: upload %.0f MB/s (sink %.0f), download "
                        + "%.0f MB/s (source %.0f), memcpy %.0f MB/s%s", r + 1, rounds, mbps.get(UPLOAD)[r],
                        mbps.get(SINK)[r], mbps.get(DOWNLOAD)[r], mbps.get(SOURCE)[r], mbps.get(MEMCPY_IN)[r],
                        regions ? String.format(Locale.ROOT, "; through a region: upload %.0f MB/s, download %.0f MB/s; "
                                + "write %.0f MB/s, read %.0f MB/s over the socket", mbps.get(REGION_UPLOAD)[r],
                                mbps.get(REGION_DOWNLOAD)[r], mbps.get(STAGED_WRITE)[r], mbps.get(STAGED_READ)[r]) : ""));
            }
            progress.update("transfer: closing");
            if (zeroRegion != null) {
                zeroRegion.close(); // its buffers go with the session, the memory after them
            }
            session.destroy(buffer).get(30, TimeUnit.SECONDS);
            if (region != null) {
                unixSession.destroy(regionBuffer).get(30, TimeUnit.SECONDS);
                unixSession.destroy(stagedBuffer).get(30, TimeUnit.SECONDS);
                region.close();
            }
        }
        progress.clear();

        Map<String, Double> med = new LinkedHashMap<>();
        for (String m : methodNames) {
            med.put(m, ThroughputScenario.median(mbps.get(m)));
        }
        double upRatio = med.get(UPLOAD) / med.get(SINK);
        double downRatio = med.get(DOWNLOAD) / med.get(SOURCE);
        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("transfer.csv"))) {
            w.write("method,round,bytes,MBps\n");
            for (int r = 0; r < rounds; r++) {
                for (String m : methodNames) {
                    w.write(String.format(Locale.ROOT, "%s,%d,%d,%.1f%n", m, r + 1, size, mbps.get(m)[r]));
                }
            }
        }
        try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("summary.csv"))) {
            w.write("method,rounds,median_MBps,min_MBps,max_MBps,anchor,median_ratio_to_anchor\n");
            for (String m : methodNames) {
                String anchor = switch (m) {
                    case UPLOAD -> SINK;
                    case DOWNLOAD -> SOURCE;
                    case REGION_UPLOAD, STAGED_WRITE -> MEMCPY_IN;
                    case REGION_DOWNLOAD, STAGED_READ -> MEMCPY_OUT;
                    default -> "";
                };
                w.write(String.format(Locale.ROOT, "%s,%d,%.1f,%.1f,%.1f,%s,%s%n", m, rounds, med.get(m),
                        ThroughputScenario.min(mbps.get(m)), ThroughputScenario.max(mbps.get(m)), anchor,
                        anchor.isEmpty() ? "" : String.format(Locale.ROOT, "%.4f", med.get(m) / med.get(anchor))));
            }
        }
        String zeroResult = "";
        String zeroSection = "";
        if (!zeroSizes.isEmpty()) {
            Map<Long, Double> zeroUs = new LinkedHashMap<>();
            try (BufferedWriter w = Files.newBufferedWriter(ctx.outDir().resolve("zero_copy.csv"))) {
                w.write("method,bytes,rounds,median_us,min_us,max_us\n");
                for (long z : zeroSizes) {
                    double[] us = micros.get(ZERO_COPY + z);
                    zeroUs.put(z, ThroughputScenario.median(us));
                    w.write(String.format(Locale.ROOT, "host_written+launch,%d,%d,%.1f,%.1f,%.1f%n", z, rounds,
                            ThroughputScenario.median(us), ThroughputScenario.min(us), ThroughputScenario.max(us)));
                }
                double[] dl = micros.get(ZERO_COPY_DOWNLOAD);
                w.write(String.format(Locale.ROOT, "download_into_itself,%d,%d,%.1f,%.1f,%.1f%n", zeroSizes.getLast(), rounds,
                        ThroughputScenario.median(dl), ThroughputScenario.min(dl), ThroughputScenario.max(dl)));
            }
            double smallest = zeroUs.get(zeroSizes.getFirst());
            double largest = zeroUs.get(zeroSizes.getLast());
            double downloadUs = ThroughputScenario.median(micros.get(ZERO_COPY_DOWNLOAD));
            double copyUs = ThroughputScenario.median(micros.get(REGION_UPLOAD));
            List<String> labels = new ArrayList<>();
            for (long z : zeroSizes) {
                labels.add(mib(z));
            }
            new BarChart(String.format(Locale.ROOT, "a buffer living in a region, made current for a launch on %s "
                    + "(median of %d rounds)", device, rounds), "microseconds", labels)
                    .add("host_written + one-item launch (zero copy)", new ArrayList<>(zeroUs.values()))
                    .writePng(ctx.outDir().resolve("zero_copy.png"));
            StringBuilder perSize = new StringBuilder();
            for (long z : zeroSizes) {
                perSize.append(String.format(Locale.ROOT, " zero_copy_us_%s=%.1f", mib(z), zeroUs.get(z)));
            }
            zeroResult = perSize + String.format(Locale.ROOT, " zero_copy_growth=%.2f zero_copy_download_us=%.1f "
                    + "region_upload_us=%.1f", largest / smallest, downloadUs, copyUs);
            StringBuilder rows = new StringBuilder();
            for (long z : zeroSizes) {
                rows.append(String.format(Locale.ROOT, "| %s | %.1f |%n", mib(z), zeroUs.get(z)));
            }
            zeroSection = String.format(Locale.ROOT, """

                    **Zero copy.** Buffers living in a third region (created with `host_region`, HOSTED_CHANGED_ON_DEVICES, \
                    f32, all from the region's first byte): each timed operation submits `host_written` for one of them \
                    and a one-work-item IR launch on %s that reads and writes its first element, waiting for the \
                    launch — the time to make the application's bytes current for a launch (each round: the \
                    median of %d such operations per buffer; the table: the median of the rounds). The CPU device \
                    runs the launch on the region itself, so the time does not depend on the size; the same bytes \
                    through a region upload take %.0f µs at %s. A download of the largest buffer into its own \
                    bytes takes %.1f µs (nothing moves).

                    | buffer size | host_written + launch, median µs |
                    | --- | --- |
                    %s
                    Largest / smallest: **%.2f**.

                    ![zero copy](zero_copy.png)
                    """, device, ZERO_COPY_REPS, copyUs, mib(size), downloadUs, rows, largest / smallest);
        }
        BarChart chart = new BarChart(String.format(Locale.ROOT, "arrayd transfer of %d MiB on %s (median of %d rounds)",
                size >> 20, device, rounds), "MB/s", List.of("host to device", "device to host"))
                .add("client-java (session stream, TCP loopback)", List.of(med.get(UPLOAD), med.get(DOWNLOAD)))
                .add("raw gRPC streaming (Sink / Source)", List.of(med.get(SINK), med.get(SOURCE)));
        if (regions) {
            chart.add("client-java through a shared-memory region", List.of(med.get(REGION_UPLOAD), med.get(REGION_DOWNLOAD)));
            chart.add("client-java write / read over the Unix socket", List.of(med.get(STAGED_WRITE), med.get(STAGED_READ)));
        }
        chart.add("in-process memcpy", List.of(med.get(MEMCPY_IN), med.get(MEMCPY_OUT)))
                .writePng(ctx.outDir().resolve("transfer.png"));

        String result = String.format(Locale.ROOT, "upload_MBps=%.0f sink_MBps=%.0f upload_ratio=%.3f download_MBps=%.0f "
                        + "source_MBps=%.0f download_ratio=%.3f memcpy_MBps=%.0f", med.get(UPLOAD), med.get(SINK), upRatio,
                med.get(DOWNLOAD), med.get(SOURCE), downRatio, med.get(MEMCPY_IN))
                + (regions ? String.format(Locale.ROOT, " region_upload_MBps=%.0f region_upload_of_memcpy=%.3f "
                        + "region_upload_of_tcp=%.1f region_download_MBps=%.0f region_download_of_memcpy=%.3f "
                        + "region_download_of_tcp=%.1f", med.get(REGION_UPLOAD), med.get(REGION_UPLOAD) / med.get(MEMCPY_IN),
                        med.get(REGION_UPLOAD) / med.get(UPLOAD), med.get(REGION_DOWNLOAD),
                        med.get(REGION_DOWNLOAD) / med.get(MEMCPY_OUT), med.get(REGION_DOWNLOAD) / med.get(DOWNLOAD))
                        + String.format(Locale.ROOT, " staged_write_MBps=%.0f staged_write_of_memcpy=%.3f "
                        + "staged_read_MBps=%.0f staged_read_of_memcpy=%.3f", med.get(STAGED_WRITE),
                        med.get(STAGED_WRITE) / med.get(MEMCPY_IN), med.get(STAGED_READ),
                        med.get(STAGED_READ) / med.get(MEMCPY_OUT)) : "")
                + zeroResult;
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "transfer: %s daemon at %s, device %s, %d rounds of %d bytes",
                ctx.inProcess() ? "in-process" : "separate-process", ctx.target(), device, rounds, size));
        lines.add(String.format(Locale.ROOT, "%-15s %12s %12s %12s", "method", "median_MBps", "min_MBps", "max_MBps"));
        for (String m : methodNames) {
            lines.add(String.format(Locale.ROOT, "%-15s %12.0f %12.0f %12.0f", m, med.get(m),
                    ThroughputScenario.min(mbps.get(m)), ThroughputScenario.max(mbps.get(m))));
        }
        lines.add(String.format(Locale.ROOT, "upload/sink %.3f, download/source %.3f", upRatio, downRatio));
        for (long z : zeroSizes) {
            lines.add(String.format(Locale.ROOT, "zero copy, %s buffer in a region: host_written + launch %.1f us (median)",
                    mib(z), ThroughputScenario.median(micros.get(ZERO_COPY + z))));
        }
        lines.add("results: " + ctx.outDir());

        String section = String.format(Locale.ROOT, """
                What is measured, in %d rounds of one %d MiB transfer per method (the order rotates each round), \
                after %d warm-up transfers of each; one transfer at a time, timed until it has completed:

                - **upload:** `Session.write(buffer, byte[])` (client-java copies the array, then sends Upload \
                commands of %d MiB on the session stream, each ordered after the one before) until its event completes;
                - **sink (anchor):** a raw generated stub streams the same array in %d MiB `SinkRequest`s to \
                `DiagnosticsService.Sink`, which drops them, until its summary arrives;
                - **download:** `Session.read(buffer)` (Download commands of %d MiB, reassembled into one array);
                - **source (anchor):** `DiagnosticsService.Source` streams %d MiB chunks (its largest; with flow \
                control) that the client copies into one array;
                - **memcpy:** `MemorySegment.copy` between a heap array and off-heap memory in the benchmark's JVM, \
                on one thread (the ceiling of a one-thread copy here).%s

                | direction | client-java MB/s | raw gRPC (anchor) MB/s | ratio | in-process memcpy MB/s |
                | --- | --- | --- | --- | --- |
                | upload (host → device) | %.0f | %.0f | **%.2f** | %.0f |
                | download (device → host) | %.0f | %.0f | **%.2f** | %.0f |
                %s
                ![transfer bandwidth](transfer.png)
                """, rounds, size >> 20, warmup, UPLOAD_CHUNK >> 20, UPLOAD_CHUNK >> 20, DOWNLOAD_CHUNK >> 20,
                SOURCE_CHUNK >> 20, regions ? "\n- **region upload / download:** a second client, connected to the daemon's "
                        + "Unix socket, uploads the same bytes from a shared-memory region it has mapped "
                        + "(`Session.upload(buffer, 0, region, 0, size)`: the daemon copies them from the region into the "
                        + "buffer on its device) and downloads them into it (`Session.download(buffer, 0, 0, region, 0)`), "
                        + "each until its event completes. Filling the region is the application's own write and is not "
                        + "timed.\n- **write / read over the socket:** that client's `Session.write(buffer, byte[])` and "
                        + "`Session.read(buffer)` (into a new array) on another buffer, through its session's 16 MiB staging "
                        + "region: a transfer that fits a free part of it copies through that part, a larger one (as at 64 "
                        + "MiB) streams through a ring of eight 1 MiB slots in it, one command whatever its size."
                        : "",
                med.get(UPLOAD), med.get(SINK), upRatio, med.get(MEMCPY_IN), med.get(DOWNLOAD),
                med.get(SOURCE), downRatio, med.get(MEMCPY_OUT), regions ? String.format(Locale.ROOT, """

                | through a shared-memory region | MB/s | of memcpy | of client-java over TCP |
                | --- | --- | --- | --- |
                | upload (host → device) | %.0f | **%.2f** | **%.1f×** |
                | download (device → host) | %.0f | **%.2f** | **%.1f×** |
                | `Session.write` over the socket | %.0f | **%.2f** | **%.1f×** |
                | `Session.read` over the socket | %.0f | **%.2f** | **%.1f×** |
                """, med.get(REGION_UPLOAD), med.get(REGION_UPLOAD) / med.get(MEMCPY_IN),
                        med.get(REGION_UPLOAD) / med.get(UPLOAD), med.get(REGION_DOWNLOAD),
                        med.get(REGION_DOWNLOAD) / med.get(MEMCPY_OUT), med.get(REGION_DOWNLOAD) / med.get(DOWNLOAD),
                        med.get(STAGED_WRITE), med.get(STAGED_WRITE) / med.get(MEMCPY_IN),
                        med.get(STAGED_WRITE) / med.get(UPLOAD), med.get(STAGED_READ),
                        med.get(STAGED_READ) / med.get(MEMCPY_OUT), med.get(STAGED_READ) / med.get(DOWNLOAD)) : "")
                + zeroSection;
        return new Report(lines, result, section);
    }

    /**
     * Buffers of each size living in one region (hosted f32, all from its first byte) and a kernel that adds 1
     * to their first element: each {@code zero_copy_<bytes>} method says the region was written (host_written)
     * and launches the kernel on the CPU device, until it completes — the bytes become current for a launch
     * without a copy; {@code zero_copy_download} downloads the largest buffer into its own bytes (nothing moves).
     */
    private static MappedRegion zeroCopy(Session s, String device, int size, List<Long> sizes,
            Map<String, Transfer> methods, Progress progress) throws Exception {
        progress.update("transfer: mapping a region of " + (size >> 20) + " MiB for buffers that live in it");
        MappedRegion zr = s.createRegion(size).get(60, TimeUnit.SECONDS);
        KernelHandle touch = s.compile(KernelModuleSpec.ir(touchKernel())).get(60, TimeUnit.SECONDS).get("touch");
        BufferOptions hosted = BufferOptions.defaults().device(device).mode(MemoryMode.HOSTED_CHANGED_ON_DEVICES);
        BufferHandle largest = null;
        for (long z : sizes) {
            long n = z / 4;
            BufferHandle zb = s.createBuffer(DType.F32, new long[] {n}, hosted, zr, 0).get(30, TimeUnit.SECONDS);
            methods.put(ZERO_COPY + z, () -> s.launch(Launch.of(touch).global(1).device(device).args(zb, n)
                    .waitFor(s.hostWritten(zb, CommandOptions.defaults()))).future().get());
            largest = zb;
        }
        BufferHandle whole = largest;
        methods.put(ZERO_COPY_DOWNLOAD, () -> s.download(whole, 0, 0, zr, 0, CommandOptions.defaults()).future().get());
        return zr;
    }

    /** x[0] += 1, one work-item: the smallest launch that reads and writes its buffer. */
    static IrKernelSpec touchKernel() {
        return Ir.kernel("touch")
                .buffer("x", DType.F32, Access.READ_WRITE, Ir.param("n"))
                .scalar("n", DType.I64, 1, 1L << 40)
                .body(b -> b.store("x", Ir.i64(0), Ir.load("x", Ir.i64(0)).add(Ir.f32(1))));
    }

    /** A size as MiB ("1MiB"), or bytes when it is not whole MiB. */
    static String mib(long bytes) {
        return bytes % (1 << 20) == 0 ? (bytes >> 20) + "MiB" : bytes + "B";
    }

    /** One timed transfer. */
    @FunctionalInterface
    private interface Transfer {
        void run() throws Exception;
    }
}
