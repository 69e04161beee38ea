package dev.arrayd.scheduler;

import static dev.arrayd.scheduler.SchedulerFixture.arg;
import static dev.arrayd.scheduler.SchedulerFixture.sc;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.KernelArg;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.statistics.Statistics;

/**
 * Random programs on a padded buffer, views of it and a plain buffer, across two small devices: uploads, fills, reads and copies of interior ranges,
 * writes of the whole padded array, launches that index the padded memory (and so write the padding),
 * transfers, the base destroyed while its views go on, and a large buffer made on one device now and then, which
 * evicts what is there (the only current copy written back to the host, and brought back later). Every read, taken while later commands are
 * already queued, must equal a model: one array for the padded memory, updated command by command in
 * submission order; and the padding holds its value wherever no kernel or whole write touched it.
 */
class PaddedBufferProperties {

    /** What the scheduler may use of a test device's 16 KiB: 90%. */
    static final long BUDGET = (1L << 14) * 9 / 10;

    /** {@code bytes} as a block of the test devices' slab pools (64-byte aligned). */
    static long align(long bytes) {
        return (bytes + 63) / 64 * 64;
    }

    /** The padded buffer: dims and (left, right) per axis, its padding value; the program. */
    record Shape(long[] dims, long[] left, long[] right, long pad) {}

    /** One step; every number is taken modulo what it indexes. */
    record Step(int kind, int handle, long a, long b, long k, int device) {}

    @Provide
    Arbitrary<Shape> shapes() {
        return Arbitraries.integers().between(1, 3).flatMap(rank -> Combinators.combine(
                Arbitraries.longs().between(1, 5).array(long[].class).ofSize(rank),
                Arbitraries.longs().between(0, 2).array(long[].class).ofSize(rank),
                Arbitraries.longs().between(0, 2).array(long[].class).ofSize(rank),
                Arbitraries.longs().between(-9, 9)).as(Shape::new));
    }

    @Provide
    Arbitrary<List<Step>> programs() {
        return Combinators.combine(Arbitraries.integers().between(0, 9), Arbitraries.integers().between(0, 2),
                Arbitraries.longs().between(0, 1000), Arbitraries.longs().between(0, 1000),
                Arbitraries.longs().between(-20, 20), Arbitraries.integers().between(0, 1)).as(Step::new)
                .list().ofMinSize(1).ofMaxSize(25);
    }

    @Property(tries = 150, shrinking = ShrinkingMode.BOUNDED)
    void interiorsViewsAndKernelsMatchTheModel(@ForAll("shapes") Shape shape, @ForAll("programs") List<Step> program)
            throws Exception {
        // 16 KiB per device, one slab (a budget of 14,745 bytes): see the filler step
        try (SchedulerFixture f = new SchedulerFixture(2, 1L << 14, 1L << 14)) {
            new Run(f, shape).run(program);
        }
    }

    /** One program against one scheduler, with its model. */
    private static final class Run {
        final SchedulerFixture f;
        final Scheduler sch;
        final Session s;
        final java.util.Map<String, CompiledKernel> k;
        final Shape shape;
        final Layout layout;
        final long[] mem;
        final long[] plain;
        final Buffer base;
        final Buffer same;
        final Buffer flat;
        final Buffer dense;
        boolean baseGone;
        long event = 1;
        final List<Event> reads = new ArrayList<>();
        final List<long[]> expected = new ArrayList<>();

        Run(SchedulerFixture f, Shape shape) {
            this.f = f;
            this.sch = f.scheduler;
            this.s = sch.openSession("padded-props", 60_000);
            this.k = f.compileAll(s);
            this.shape = shape;
            this.layout = new Layout(shape.dims(), shape.left(), shape.right());
            base = sch.createBuffer(s, DType.I64, shape.dims(), new Padding(shape.left(), shape.right(),
                    KernelArg.Scalar.i64(shape.pad())), "null:0", "base", MemoryMode.DEVICE);
            same = sch.createView(s, base.handle(), shape.dims(), false, "same");
            flat = sch.createView(s, base.handle(), new long[] {layout.storageElements()}, true, "flat");
            dense = sch.createBuffer(s, DType.I64, new long[] {layout.elements()}, "null:1", "dense",
                    MemoryMode.HOSTED_CHANGED_ON_DEVICES);
            mem = new long[(int) layout.storageElements()];
            Arrays.fill(mem, layout.isPadded() ? shape.pad() : 0);
            for (long i = 0; i < layout.elements(); i++) {
                mem[(int) at(i)] = 0;
            }
            plain = new long[(int) layout.elements()];
        }

        /** Where interior element {@code i} (row-major) is in memory: its index on each axis, shifted by the padding. */
        long at(long i) {
            long[] dims = shape.dims();
            long[] idx = new long[dims.length];
            for (int a = dims.length - 1; a >= 0; a--) {
                idx[a] = i % dims[a];
                i /= dims[a];
            }
            long pos = 0;
            for (int a = 0; a < dims.length; a++) {
                pos = pos * (shape.left()[a] + dims[a] + shape.right()[a]) + shape.left()[a] + idx[a];
            }
            return pos;
        }

        /** The handle a step uses: the base (until destroyed) or the view with its dims. */
        Buffer interior(int h) {
            return h == 0 && !baseGone ? base : same;
        }

        void run(List<Step> program) throws Exception {
            long n = layout.elements();
            long total = layout.storageElements();
            for (Step st : program) {
                long first = st.a() % n;
                long count = 1 + st.b() % (n - first);
                String device = "null:" + st.device();
                switch (st.kind()) {
                    case 0 -> { // an interior upload
                        long[] v = new long[(int) count];
                        for (int i = 0; i < count; i++) {
                            v[i] = st.k() * 100 + i;
                            mem[(int) at(first + i)] = v[i];
                        }
                        submit(new CommandSpec.UploadOp(interior(st.handle()).handle(), first * 8, MemorySegment.ofArray(v)));
                    }
                    case 1 -> { // a write of the whole padded array, through the base or the flat view
                        long wf = st.a() % total;
                        long wc = 1 + st.b() % (total - wf);
                        long[] v = new long[(int) wc];
                        for (int i = 0; i < wc; i++) {
                            v[i] = st.k() - i;
                            mem[(int) (wf + i)] = v[i];
                        }
                        Buffer h = st.handle() == 2 || baseGone ? flat : base;
                        submit(new CommandSpec.UploadOp(h.handle(), wf * 8, MemorySegment.ofArray(v), h != flat));
                    }
                    case 2 -> { // an interior fill
                        for (long i = first; i < first + count; i++) {
                            mem[(int) at(i)] = st.k();
                        }
                        submit(new CommandSpec.FillOp(interior(st.handle()).handle(), KernelArg.Scalar.i64(st.k()), first,
                                count));
                    }
                    case 3 -> { // set over the padded memory's first elements, on either device
                        long g = 1 + st.b() % total;
                        for (int i = 0; i < g; i++) {
                            mem[i] = st.k() * i + 1;
                        }
                        Buffer h = st.handle() == 2 || baseGone ? flat : interior(st.handle());
                        submit(new CommandSpec.LaunchOp(k.get("set").handle(), new long[] {g}, null,
                                List.of(arg(h), sc(st.k())), device));
                    }
                    case 4 -> { // interior -> plain
                        long to = st.k() < 0 ? 0 : Math.min(st.k(), n - count);
                        for (long i = 0; i < count; i++) {
                            plain[(int) (to + i)] = mem[(int) at(first + i)];
                        }
                        submit(new CommandSpec.CopyOp(interior(st.handle()).handle(), dense.handle(), first * 8, to * 8,
                                count * 8));
                    }
                    case 5 -> { // plain -> interior
                        long from = st.k() < 0 ? 0 : Math.min(st.k(), n - count);
                        for (long i = 0; i < count; i++) {
                            mem[(int) at(first + i)] = plain[(int) (from + i)];
                        }
                        submit(new CommandSpec.CopyOp(dense.handle(), interior(st.handle()).handle(), from * 8, first * 8,
                                count * 8));
                    }
                    case 6 -> submit(new CommandSpec.CopyOp(interior(st.handle()).handle(), 0, 0, 0, 0, device,
                            MergeMode.NONE)); // a transfer
                    case 7 -> { // an interior read, checked once everything is done
                        long[] v = new long[(int) count];
                        for (int i = 0; i < count; i++) {
                            v[i] = mem[(int) at(first + i)];
                        }
                        read(new CommandSpec.DownloadOp(interior(st.handle()).handle(), first * 8, count * 8,
                                Long.MAX_VALUE), v);
                    }
                    case 8 -> {
                        if (!baseGone && st.handle() == 1) {
                            sch.destroyBuffer(s, base.handle()); // the views keep the memory
                            baseGone = true;
                        } else { // plain += a copy of it: mix over the plain buffer, a = dense
                            for (int i = 0; i < n; i++) {
                                plain[i] = plain[i] * 3 + plain[i] + st.k();
                            }
                            submit(new CommandSpec.LaunchOp(k.get("mix").handle(), new long[] {n}, null,
                                    List.of(arg(dense), arg(dense), sc(st.k())), device));
                        }
                    }
                    case 9 -> { // a buffer 64 bytes too large to fit beside the plain and the padded one
                        long room = BUDGET - align(dense.sizeBytes()) - align(base.sizeBytes()) + 64;
                        try {
                            Buffer filler = sch.createBuffer(s, DType.I64, new long[] {Math.max(1, room / 8)}, device,
                                    "filler", MemoryMode.DEVICE);
                            sch.destroyBuffer(s, filler.handle());
                        } catch (dev.arrayd.devices.api.ArraydException e) {
                            // memory of evicted replicas that commands still use is fenced: no room yet, which is
                            // RESOURCE_EXHAUSTED (after evicting what it could; the data is where the model says)
                            org.junit.jupiter.api.Assertions.assertEquals(dev.arrayd.devices.api.ErrorCode.RESOURCE_EXHAUSTED,
                                    e.code(), e::getMessage);
                        }
                    }
                    default -> throw new IllegalStateException();
                }
            }
            read(new CommandSpec.DownloadOp(flat.handle(), 0, 0, Long.MAX_VALUE), mem.clone());
            read(new CommandSpec.DownloadOp(dense.handle(), 0, 0, Long.MAX_VALUE), plain.clone());
            MultiDeviceProperties.await(reads);
            for (int i = 0; i < reads.size(); i++) {
                assertArrayEquals(expected.get(i), MultiDeviceProperties.longs(reads.get(i)), "read " + i);
            }
            long evicted = sch.devices().get(0).evictions() + sch.devices().get(1).evictions();
            Statistics.label("replicas evicted").collect(evicted > 0)
                    .coverage(c -> c.check(true).percentage(p -> p >= 8)); // the eviction path is really taken (about 20%)
            sch.closeSession(s);
        }

        void submit(CommandSpec.Op op) {
            sch.submit(s, List.of(new CommandSpec(event++, null, 0, op)), null);
        }

        void read(CommandSpec.Op op, long[] expect) {
            reads.add(sch.submit(s, List.of(new CommandSpec(event++, null, 0, op)), null).getFirst());
            expected.add(expect);
        }
    }
}
