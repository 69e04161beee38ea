package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.KernelArg;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/** Weighted fair share and priority classes of the device queue, on the test device. */
class FairShareTest {

    static final long COST_NANOS = 20_000;

    /** A fill of {@code b} with {@code v}, on {@code stream}. */
    static CommandSpec fill(long event, Buffer b, long v, long stream, Priority p) {
        return new CommandSpec(event, null, stream, new CommandSpec.FillOp(b.handle(), KernelArg.Scalar.i64(v), 0, 0),
                CommandSpec.NO_DEADLINE, p);
    }

    static Event await(Event e) throws Exception {
        return e.toFuture().get(30, TimeUnit.SECONDS);
    }

    /** Submits a fill of {@code b} on the default stream, waits for it, and says whether it ran inline on {@code dev}. */
    static boolean fillRanInline(Scheduler sch, Session s, TestDevice dev, Buffer b, long event) throws Exception {
        int before = dev.inlineRuns();
        await(sch.submit(s, fill(event, b, 1, 0, null), e -> { }));
        return dev.inlineRuns() > before;
    }

    /** The fill pattern of a command the test device ran (how tests recognise their commands). */
    static long tag(DeviceCommand c) {
        return c instanceof DeviceCommand.Fill f ? f.pattern() : -1;
    }

    @Test
    void saturatedDeviceIsSharedByWeight() throws Exception {
        try (SchedulerFixture f = new SchedulerFixture(1)) {
            TestDevice dev = f.devices.getFirst();
            dev.jitter(false);
            Scheduler sch = f.scheduler;
            Session light = sch.openSession("light", 10_000);
            Session heavy = sch.openSession("heavy", 10_000);
            light.setTenant("a", 1);
            heavy.setTenant("b", 3);
            int streams = 6;
            int perStream = 200;
            dev.cost(c -> COST_NANOS);
            List<List<CommandSpec>> work = new ArrayList<>();
            Session[] who = {light, heavy};
            for (Session s : who) {
                List<CommandSpec> batch = new ArrayList<>();
                long event = 1;
                for (int i = 0; i < streams; i++) {
                    Buffer b = sch.createBuffer(s, DType.I64, new long[] {4}, "", "");
                    long st = sch.createStream(s, "").handle();
                    for (int n = 0; n < perStream; n++) {
                        batch.add(fill(event++, b, n, st, null));
                    }
                }
                await(sch.stream(s, 0, "").allWork());
                work.add(batch);
            }
            // both backlogged from the first dispatch on
            dev.hold();
            LongAdder[] deviceNanos = {new LongAdder(), new LongAdder()};
            // measured while both are surely backlogged: until the heavy session has done half its work
            long[] atHalf = new long[2];
            AtomicInteger heavyLeft = new AtomicInteger(streams * perStream);
            CompletableFuture<Void> heavyDone = new CompletableFuture<>();
            List<Event> all = new ArrayList<>();
            all.addAll(sch.submit(light, work.get(0), e -> deviceNanos[0].add(e.deviceNanos())));
            all.addAll(sch.submit(heavy, work.get(1), e -> {
                deviceNanos[1].add(e.deviceNanos());
                if (heavyLeft.decrementAndGet() == streams * perStream / 2) {
                    atHalf[0] = deviceNanos[0].sum();
                    atHalf[1] = deviceNanos[1].sum();
                    heavyDone.complete(null);
                }
            }));
            dev.open();
            heavyDone.get(60, TimeUnit.SECONDS);
            double ratio = (double) atHalf[1] / atHalf[0];
            assertTrue(Math.abs(ratio - 3) <= 0.3, "device time heavy:light = " + ratio + " (expected: 3 within 10%)");
            for (Event e : all) {
                assertEquals(EventState.SUCCEEDED, await(e).state());
            }
            dev.cost(null);
        }
    }

    @Test
    void highPriorityOvertakesQueuedNormalCommands() throws Exception {
        try (SchedulerFixture f = new SchedulerFixture(1, 1L << 24, 1L << 20, 1, System::nanoTime)) {
            TestDevice dev = f.devices.getFirst();
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("normal", 10_000);
            Session urgent = sch.openSession("urgent", 10_000);
            List<Buffer> bufs = new ArrayList<>();
            List<Long> streams = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                bufs.add(sch.createBuffer(s, DType.I64, new long[] {4}, "", ""));
                streams.add(sch.createStream(s, "").handle());
            }
            Buffer ub = sch.createBuffer(urgent, DType.I64, new long[] {4}, "", "");
            await(sch.stream(s, 0, "").allWork());
            await(sch.stream(urgent, 0, "").allWork());
            dev.hold();
            dev.executed.clear();
            List<Event> events = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                events.addAll(sch.submit(s, List.of(fill(i + 1, bufs.get(i), 100 + i, streams.get(i), null)), null));
            }
            assertEquals(4, sch.devices().getFirst().queuedCommands(), "one dispatched, four queued");
            events.addAll(sch.submit(urgent, List.of(fill(1, ub, 999, 0, Priority.HIGH)), null));
            dev.open();
            for (Event e : events) {
                assertEquals(EventState.SUCCEEDED, await(e).state());
            }
            List<Long> order = dev.executed.stream().map(FairShareTest::tag).toList();
            assertEquals(List.of(100L, 999L, 101L, 102L, 103L, 104L), order, "the HIGH fill runs right after the one running");
        }
    }

    @Test
    void lowPriorityIsNotStarved() throws Exception {
        try (SchedulerFixture f = new SchedulerFixture(1, 1L << 24, 1L << 20, 1, System::nanoTime)) {
            TestDevice dev = f.devices.getFirst();
            Scheduler sch = f.scheduler;
            Session hi = sch.openSession("hi", 10_000);
            Session lo = sch.openSession("lo", 10_000);
            hi.setPriority(Priority.HIGH);
            lo.setPriority(Priority.LOW);
            int n = 3 * DeviceQueue.STARVATION_LIMIT;
            List<Buffer> bufs = new ArrayList<>();
            List<Long> streams = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                bufs.add(sch.createBuffer(hi, DType.I64, new long[] {4}, "", ""));
                streams.add(sch.createStream(hi, "").handle());
            }
            Buffer lb = sch.createBuffer(lo, DType.I64, new long[] {4}, "", "");
            await(sch.stream(hi, 0, "").allWork());
            await(sch.stream(lo, 0, "").allWork());
            dev.hold();
            dev.executed.clear();
            List<Event> events = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                events.addAll(sch.submit(hi, List.of(fill(i + 1, bufs.get(i), i, streams.get(i), null)), null));
            }
            events.addAll(sch.submit(lo, List.of(fill(1, lb, -7, 0, null)), null));
            dev.open();
            for (Event e : events) {
                assertEquals(EventState.SUCCEEDED, await(e).state());
            }
            List<Long> order = dev.executed.stream().map(FairShareTest::tag).toList();
            int at = order.indexOf(-7L);
            assertTrue(at >= 0 && at <= DeviceQueue.STARVATION_LIMIT + 2,
                    "the LOW fill ran at position " + at + " of " + order.size() + " (expected: within the starvation limit)");
        }
    }

    @Test
    void idleDeviceStillRunsShortCommandsInline() throws Exception {
        try (SchedulerFixture f = new SchedulerFixture(1)) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("fast", 10_000);
            Buffer b = sch.createBuffer(s, DType.I64, new long[] {4}, "", "");
            int before = f.devices.getFirst().inlineRuns();
            for (int i = 1; i <= 50; i++) {
                await(sch.submit(s, List.of(fill(i, b, i, 0, null)), null).getFirst());
            }
            assertTrue(f.devices.getFirst().inlineRuns() - before > 0, "some ran inline");
            assertEquals(0, sch.devices().getFirst().queuedCommands());
        }
    }

    @Test
    void weightsDefaultToOneAndTenantToDefault() {
        try (SchedulerFixture f = new SchedulerFixture(1)) {
            Session s = f.scheduler.openSession("x", 10_000);
            assertEquals(Session.DEFAULT_TENANT, s.tenant());
            assertEquals(1, s.weight());
            assertEquals(Priority.NORMAL, s.priority());
        }
    }
}
