package dev.arrayd.scheduler;

import static dev.arrayd.scheduler.SchedulerFixture.arg;
import static dev.arrayd.scheduler.SchedulerFixture.sc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.arrayd.devices.api.DType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.constraints.Size;

/**
 * Random programs on a PER_STREAM buffer across three streams on two devices — writes, read-modify-
 * writes, copies of one stream's instance into a shared buffer, reads of that buffer into an instance —
 * submitted in batches of random size and run concurrently, give what a model with one array per
 * stream gives in program order. Each stream's instance starts at zero; instances and the shared
 * buffer are freed with the session (the fixture checks no slab bytes are left).
 */
class PerStreamProperties {

    static final int N = 4;
    static final int STREAMS = 3;

    /**
     * @param kind   0 set(instance, k); 1 mix(instance, instance, k); 2 copy stream {@code from}'s instance
     *               to the shared buffer; 3 mix(shared, instance, k)
     * @param stream where it runs
     * @param from   the instance a copy reads
     * @param k      the scalar
     * @param cut    end the batch after this step
     */
    record Step(int kind, int stream, int from, long k, boolean cut) {}

    @Provide
    Arbitrary<Step> steps() {
        return Combinators.combine(
                Arbitraries.integers().between(0, 3),
                Arbitraries.integers().between(0, STREAMS - 1),
                Arbitraries.integers().between(0, STREAMS - 1),
                Arbitraries.longs().between(-5, 5),
                Arbitraries.of(true, false)).as(Step::new);
    }

    @Property(tries = 60, shrinking = ShrinkingMode.BOUNDED)
    void perStreamInstancesMatchAModelWithOneArrayPerStream(
            @ForAll @Size(min = 1, max = 30) List<@From("steps") Step> program) throws Exception {
        try (SchedulerFixture f = new SchedulerFixture(2)) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("per-stream-props", 10_000);
            Map<String, CompiledKernel> k = f.compileAll(s);
            Buffer g = sch.createBuffer(s, DType.I64, new long[] {N}, "null:0", "g", MemoryMode.DEVICE, Sharing.PER_STREAM);
            Buffer shared = sch.createBuffer(s, DType.I64, new long[] {N}, "null:1", "shared", MemoryMode.DEVICE);
            long[] streams = new long[STREAMS];
            for (int i = 0; i < STREAMS; i++) {
                streams[i] = sch.createStream(s, "null:" + (i % 2)).handle();
            }
            long[][] model = new long[STREAMS][N];
            long[] sharedModel = new long[N];
            long event = 1;
            List<CommandSpec> batch = new ArrayList<>();
            List<Event> events = new ArrayList<>();
            for (Step st : program) {
                long on = streams[st.stream()];
                long[] inst = model[st.stream()];
                CommandSpec.Op op = switch (st.kind()) {
                    case 0 -> {
                        for (int i = 0; i < N; i++) {
                            inst[i] = st.k() * i + 1;
                        }
                        yield launch(k.get("set"), arg(g), sc(st.k()));
                    }
                    case 1 -> {
                        for (int i = 0; i < N; i++) {
                            inst[i] = inst[i] * 3 + inst[i] + st.k();
                        }
                        yield launch(k.get("mix"), arg(g), arg(g), sc(st.k()));
                    }
                    case 2 -> {
                        System.arraycopy(model[st.from()], 0, sharedModel, 0, N);
                        yield new CommandSpec.CopyOp(g.handle(), shared.handle(), 0, 0, 0, "", MergeMode.NONE,
                                streams[st.from()]);
                    }
                    default -> {
                        for (int i = 0; i < N; i++) {
                            inst[i] = inst[i] * 3 + sharedModel[i] + st.k();
                        }
                        yield launch(k.get("mix"), arg(shared), arg(g), sc(st.k()));
                    }
                };
                batch.add(new CommandSpec(event++, null, on, op));
                if (st.cut()) {
                    events.addAll(sch.submit(s, batch, null));
                    batch.clear();
                }
            }
            events.addAll(sch.submit(s, batch, null));
            for (Event e : events) {
                Event done = e.toFuture().get(30, TimeUnit.SECONDS);
                assertEquals(EventState.SUCCEEDED, done.state(), () -> String.valueOf(done.failure()));
            }
            for (int i = 0; i < STREAMS; i++) {
                assertArrayEquals(model[i], f.readI64(s, g, streams[i], event++), "stream " + i + "'s instance");
            }
            assertArrayEquals(sharedModel, f.readI64(s, shared, streams[0], event++), "the shared buffer");
            sch.closeSession(s);
        }
    }

    private static CommandSpec.LaunchOp launch(CompiledKernel kernel, CommandSpec.Arg... args) {
        return new CommandSpec.LaunchOp(kernel.handle(), new long[] {N}, null, List.of(args), "");
    }



}
