package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

/**
 * Random graphs with random deadlines, priorities and cancellations, submitted while the test device
 * holds its work; then the clock passes some deadlines, some commands are cancelled, and the device
 * lets go. Every event settles (no deadlock), nothing expired or cancelled runs unless it had already
 * been handed to the device, and every failure is DEADLINE_EXCEEDED or CANCELLED (its own or a
 * dependency's).
 */
class DeadlineProperties {

    static final long NOW = 1_000;
    static final long LATER = 5_000;

    /**
     * @param kind     0 fill, 1 mix (reads a, writes b)
     * @param deadline 0 none, 1 before LATER (expires), 2 after LATER
     */
    record Step(int kind, int a, int b, int stream, int deadline, boolean cancel, int waitOn, int priority) {}

    @Provide
    Arbitrary<Step> steps() {
        return Combinators.combine(
                Arbitraries.integers().between(0, 1),
                Arbitraries.integers().between(0, 2),
                Arbitraries.integers().between(0, 2),
                Arbitraries.integers().between(0, 2),
                Arbitraries.integers().between(0, 2),
                Arbitraries.of(true, false, false, false),
                Arbitraries.integers().between(0, 3),
                Arbitraries.integers().between(0, 3)).as(Step::new);
    }

    /** The tag of a command the test device was handed: the fill value or the mix's scalar. */
    static long tag(DeviceCommand c) {
        return switch (c) {
            case DeviceCommand.Fill f -> f.pattern();
            case DeviceCommand.Launch l -> ((KernelArg.Scalar) l.args().getLast()).bits();
            default -> -1;
        };
    }

    @Property(tries = 60)
    void expiredAndCancelledWorkNeverRunsAndEverythingSettles(
            @ForAll @Size(min = 1, max = 40) List<@From("steps") Step> program) throws Exception {
        AtomicLong clock = new AtomicLong(NOW);
        try (SchedulerFixture f = new SchedulerFixture(1, 1L << 24, 1L << 20, 2, clock::get)) {
            TestDevice dev = f.devices.getFirst();
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("deadlines", 10_000);
            Map<String, CompiledKernel> k = f.compileAll(s);
            List<Buffer> bufs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                bufs.add(sch.createBuffer(s, DType.I64, new long[] {8}, "", ""));
            }
            long[] streams = {0, sch.createStream(s, "").handle(), sch.createStream(s, "").handle()};
            FairShareTest.await(sch.stream(s, 0, "").allWork());
            dev.hold();
            List<Event> events = new ArrayList<>();
            for (int i = 0; i < program.size(); i++) {
                Step st = program.get(i);
                long tag = 1000 + i;
                CommandSpec.Op op = st.kind() == 0
                        ? new CommandSpec.FillOp(bufs.get(st.b()).handle(), KernelArg.Scalar.i64(tag), 0, 0)
                        : new CommandSpec.LaunchOp(k.get("mix").handle(), new long[] {8}, null, List.of(
                                new CommandSpec.BufferArg(bufs.get(st.a()).handle()),
                                new CommandSpec.BufferArg(bufs.get(st.b()).handle()),
                                new CommandSpec.ScalarArg(KernelArg.Scalar.i64(tag))), "");
                long deadline = switch (st.deadline()) {
                    case 1 -> NOW + 1 + i;
                    case 2 -> LATER + 1 + i;
                    default -> CommandSpec.NO_DEADLINE;
                };
                long[] waits = st.waitOn() == 0 && i > 0 ? new long[] {1 + (i * 7L) % i} : null;
                Priority p = st.priority() == 3 ? null : Priority.values()[st.priority()];
                events.addAll(sch.submit(s, List.of(new CommandSpec(i + 1, waits, streams[st.stream()], op, deadline, p)),
                        null));
            }
            Set<Long> handedBefore = new HashSet<>();
            dev.handed.forEach(c -> handedBefore.add(tag(c)));
            clock.set(LATER);
            sch.expireDeadlines(); // (the timer may be expiring them too: this returns after its run)
            // expiring a command may make others ready, and (their other dependencies being on the device
            // already, waited for natively) hand them to the device before the cancel below
            Set<Long> handedBeforeCancel = new HashSet<>();
            dev.handed.forEach(c -> handedBeforeCancel.add(tag(c)));
            List<Long> cancel = new ArrayList<>();
            for (int i = 0; i < program.size(); i++) {
                if (program.get(i).cancel()) {
                    cancel.add(i + 1L);
                }
            }
            sch.cancel(s, cancel.stream().mapToLong(Long::longValue).toArray());
            dev.open();
            for (Event e : events) {
                e.toFuture().get(30, TimeUnit.SECONDS); // every event settles: no deadlock
            }
            Set<Long> ran = new HashSet<>();
            dev.executed.forEach(c -> ran.add(tag(c)));
            for (int i = 0; i < program.size(); i++) {
                Step st = program.get(i);
                Event e = events.get(i);
                long tag = 1000 + i;
                boolean dropped = st.deadline() == 1 || st.cancel();
                Set<Long> handed = st.deadline() == 1 ? handedBefore : handedBeforeCancel;
                if (dropped && !handed.contains(tag)) {
                    assertFalse(ran.contains(tag), "command " + (i + 1) + " ran although " + (st.cancel() ? "cancelled"
                            : "expired"));
                    assertEquals(EventState.FAILED, e.state(), "command " + (i + 1));
                }
                if (e.isFailed()) {
                    ErrorCode code = e.failure().code();
                    assertTrue(code == ErrorCode.DEADLINE_EXCEEDED || code == ErrorCode.CANCELLED,
                            "command " + (i + 1) + ": " + e.failure());
                } else {
                    assertTrue(ran.contains(tag), "command " + (i + 1) + " succeeded without running");
                }
            }
            assertEquals(0, sch.devices().getFirst().queuedCommands());
            sch.closeSession(s);
        }
    }
}
