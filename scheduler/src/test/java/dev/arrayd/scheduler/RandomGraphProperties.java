package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.KernelArg;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

/**
 * Random command graphs over a few buffers, run with real concurrency on several streams of two
 * devices, give exactly the result of running the same commands one by one in submission order.
 */
class RandomGraphProperties {

    static final int N = 8;
    static final int BUFFERS_PER_DEVICE = 3;

    /** One step of a random program; indexes are taken modulo what exists. */
    record Step(int kind, int a, int b, long k, int stream, int waits, int batchBreak) {}

    @Provide
    Arbitrary<Step> steps() {
        return Combinators.combine(
                Arbitraries.integers().between(0, 5),
                Arbitraries.integers().between(0, 2 * BUFFERS_PER_DEVICE - 1),
                Arbitraries.integers().between(0, BUFFERS_PER_DEVICE - 1),
                Arbitraries.longs().between(-50, 50),
                Arbitraries.integers().between(0, 2),
                Arbitraries.integers().between(0, 2),
                Arbitraries.integers().between(0, 3)).as(Step::new);
    }

    @Property(tries = 60)
    void concurrentExecutionEqualsSequential(@ForAll @Size(min = 1, max = 60) List<@net.jqwik.api.From("steps") Step> program)
            throws Exception {
        try (SchedulerFixture f = new SchedulerFixture(2)) {
            Session s = f.scheduler.openSession("property", 10_000);
            runAndCheck(f, s, program);
        }
    }

    /**
     * The same with launches of a simulated device time in each of the ways a ready launch can run (see
     * RunBesideTest): inline one after the other (2 µs), inline or beside the one queued inline (12 µs),
     * inline only on a thread completing a command, one per completion (40 µs). Every inline run is accepted.
     */
    @Property(tries = 30)
    void concurrentExecutionEqualsSequentialWhereverLaunchesRun(
            @ForAll @Size(min = 1, max = 60) List<@net.jqwik.api.From("steps") Step> program,
            @ForAll("launchCosts") long launchNanos) throws Exception {
        try (SchedulerFixture f = new SchedulerFixture(2)) {
            for (TestDevice d : f.devices) {
                d.acceptEveryInlineRun(true);
                d.cost(c -> c instanceof dev.arrayd.devices.api.DeviceCommand.Launch ? launchNanos : 0);
            }
            Session s = f.scheduler.openSession("property", 10_000);
            runAndCheck(f, s, program);
        }
    }

    @Provide
    Arbitrary<Long> launchCosts() {
        return Arbitraries.of(2_000L, 12_000L, 40_000L);
    }

    /**
     * Several sessions of different weights and priority classes run their own random programs at
     * once through small device queues (two commands handed to each device at a time, so most wait
     * and get reordered across sessions): each session's results are still those of its program run
     * one command at a time.
     */
    @Property(tries = 25)
    void multiSessionExecutionEqualsSequentialPerSession(
            @ForAll @Size(min = 2, max = 3) List<@Size(min = 1, max = 40) List<@net.jqwik.api.From("steps") Step>> programs)
            throws Exception {
        try (SchedulerFixture f = new SchedulerFixture(2, 1L << 24, 1L << 20, 2, System::nanoTime)) {
            List<java.util.concurrent.CompletableFuture<Void>> runs = new ArrayList<>();
            for (int i = 0; i < programs.size(); i++) {
                Session s = f.scheduler.openSession("tenant-" + i, 10_000);
                s.setTenant("t" + i, 1 + 2 * i);
                s.setPriority(Priority.values()[i % Priority.values().length]);
                List<Step> program = programs.get(i);
                runs.add(java.util.concurrent.CompletableFuture.runAsync(() -> {
                    try {
                        runAndCheck(f, s, program);
                    } catch (Exception e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                }, r -> Thread.ofPlatform().start(r)));
            }
            for (var r : runs) {
                r.get(60, TimeUnit.SECONDS);
            }
        }
    }

    static void runAndCheck(SchedulerFixture f, Session s, List<Step> program) throws Exception {
        {
            Scheduler sch = f.scheduler;
            Map<String, CompiledKernel> k = f.compileAll(s);
            // buffers: device d holds buffers [d*B, d*B + B)
            List<Buffer> bufs = new ArrayList<>();
            long[][] model = new long[2 * BUFFERS_PER_DEVICE][N];
            for (int d = 0; d < 2; d++) {
                for (int i = 0; i < BUFFERS_PER_DEVICE; i++) {
                    bufs.add(sch.createBuffer(s, DType.I64, new long[] {N}, "null:" + d, "b" + i));
                }
            }
            // streams per device: default (0) plus two of the session's own
            long[][] streams = new long[2][3];
            for (int d = 0; d < 2; d++) {
                streams[d][1] = sch.createStream(s, "null:" + d).handle();
                streams[d][2] = sch.createStream(s, "null:" + d).handle();
            }
            long nextEvent = 1;
            List<CommandSpec> batch = new ArrayList<>();
            List<long[]> expectedDownloads = new ArrayList<>();
            List<Event> downloads = new ArrayList<>();
            List<Integer> downloadIndexInBatch = new ArrayList<>();
            List<Event> all = new ArrayList<>();
            for (Step st : program) {
                int dev = st.a() / BUFFERS_PER_DEVICE;
                int ai = st.a();
                int bi = dev * BUFFERS_PER_DEVICE + st.b();
                Buffer a = bufs.get(ai);
                Buffer b = bufs.get(bi);
                long stream = streams[dev][st.stream()];
                long[] waits = new long[Math.min(st.waits(), (int) (nextEvent - 1))];
                for (int w = 0; w < waits.length; w++) {
                    waits[w] = nextEvent - 1 - w * 3L;
                    if (waits[w] < 1) {
                        waits[w] = 1;
                    }
                }
                CommandSpec.Op op;
                switch (st.kind()) {
                    case 0 -> {
                        op = new CommandSpec.LaunchOp(k.get("mix").handle(), new long[] {N}, null, List.of(
                                new CommandSpec.BufferArg(a.handle()), new CommandSpec.BufferArg(b.handle()),
                                new CommandSpec.ScalarArg(KernelArg.Scalar.i64(st.k()))), "");
                        long[] av = model[ai].clone();
                        for (int i = 0; i < N; i++) {
                            model[bi][i] = model[bi][i] * 3 + av[i] + st.k();
                        }
                    }
                    case 1 -> {
                        op = new CommandSpec.LaunchOp(k.get("set").handle(), new long[] {N}, null, List.of(
                                new CommandSpec.BufferArg(b.handle()), new CommandSpec.ScalarArg(KernelArg.Scalar.i64(st.k()))), "");
                        for (int i = 0; i < N; i++) {
                            model[bi][i] = st.k() * i + 1;
                        }
                    }
                    case 2 -> {
                        op = new CommandSpec.FillOp(b.handle(), KernelArg.Scalar.i64(st.k()), 0, 0);
                        java.util.Arrays.fill(model[bi], st.k());
                    }
                    case 3 -> {
                        if (ai == bi) {
                            op = new CommandSpec.FillOp(b.handle(), KernelArg.Scalar.i64(-st.k()), 2, 3);
                            for (int i = 2; i < 5; i++) {
                                model[bi][i] = -st.k();
                            }
                        } else {
                            op = new CommandSpec.CopyOp(a.handle(), b.handle(), 0, 0, 0);
                            model[bi] = model[ai].clone();
                        }
                    }
                    case 4 -> {
                        long[] data = new long[N];
                        for (int i = 0; i < N; i++) {
                            data[i] = st.k() - i;
                        }
                        op = new CommandSpec.UploadOp(b.handle(), 0, MemorySegment.ofArray(data));
                        model[bi] = data.clone();
                    }
                    default -> {
                        op = new CommandSpec.DownloadOp(a.handle(), 0, 0, Long.MAX_VALUE);
                        expectedDownloads.add(model[ai].clone());
                        downloadIndexInBatch.add(batch.size());
                    }
                }
                batch.add(new CommandSpec(nextEvent++, waits, stream, op));
                if (st.batchBreak() == 0) {
                    flush(sch, s, batch, all, downloads, downloadIndexInBatch);
                }
            }
            flush(sch, s, batch, all, downloads, downloadIndexInBatch);
            for (Event e : all) {
                e.toFuture().get(30, TimeUnit.SECONDS);
                assertEquals(EventState.SUCCEEDED, e.state(), () -> e + ": " + e.failure());
            }
            for (int i = 0; i < downloads.size(); i++) {
                assertArrayEquals(expectedDownloads.get(i), longs((byte[]) downloads.get(i).result()), "download #" + i);
            }
            for (int i = 0; i < bufs.size(); i++) {
                List<Event> fin = sch.submit(s, List.of(new CommandSpec(nextEvent++, null, 0,
                        new CommandSpec.DownloadOp(bufs.get(i).handle(), 0, 0, Long.MAX_VALUE))), null);
                Event e = fin.getFirst().toFuture().get(30, TimeUnit.SECONDS);
                assertArrayEquals(model[i], longs((byte[]) e.result()), "final contents of buffer " + i);
            }
            sch.closeSession(s);
        }
    }

    @net.jqwik.api.Example
    void theFastPathIsTakenForShortCommands() throws Exception {
        try (SchedulerFixture f = new SchedulerFixture(1)) {
            Session s = f.scheduler.openSession("fast", 10_000);
            Buffer b = f.scheduler.createBuffer(s, DType.I64, new long[] {N}, "", "");
            for (int i = 1; i <= 50; i++) {
                f.scheduler.submit(s, List.of(new CommandSpec(i, null, 0,
                        new CommandSpec.FillOp(b.handle(), KernelArg.Scalar.i64(i), 0, 0))), null).getFirst()
                        .toFuture().get(10, TimeUnit.SECONDS);
            }
            org.junit.jupiter.api.Assertions.assertTrue(f.devices.getFirst().inlineRuns() > 0, "some ran inline");
            f.scheduler.closeSession(s);
        }
    }

    private static void flush(Scheduler sch, Session s, List<CommandSpec> batch, List<Event> all, List<Event> downloads,
            List<Integer> downloadIndexInBatch) {
        if (batch.isEmpty()) {
            return;
        }
        List<Event> events = sch.submit(s, List.copyOf(batch), null);
        all.addAll(events);
        for (int idx : downloadIndexInBatch) {
            downloads.add(events.get(idx));
        }
        batch.clear();
        downloadIndexInBatch.clear();
    }

    private static long[] longs(byte[] bytes) {
        long[] out = new long[bytes.length / 8];
        ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder()).asLongBuffer().get(out);
        return out;
    }
}
