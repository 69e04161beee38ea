package dev.arrayd.scheduler;

import static dev.arrayd.scheduler.FairShareTest.COST_NANOS;
import static dev.arrayd.scheduler.FairShareTest.await;
import static dev.arrayd.scheduler.FairShareTest.fill;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.DType;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * Weights belong to tenants, not sessions: on a saturated fake device, a tenant's sessions split
 * their tenant's share, so opening more sessions buys no more device time.
 */
class TenantFairShareTest {

    static final int STREAMS = 4;
    static final int PER_STREAM = 150;

    /** One session's backlog: {@link #STREAMS} streams of {@link #PER_STREAM} fills each. */
    static List<CommandSpec> backlog(Scheduler sch, Session s) throws Exception {
        List<CommandSpec> batch = new ArrayList<>();
        long event = 1;
        for (int i = 0; i < STREAMS; i++) {
            Buffer b = sch.createBuffer(s, DType.I64, new long[] {4}, "", "");
            long st = sch.createStream(s, "").handle();
            for (int n = 0; n < PER_STREAM; n++) {
                batch.add(fill(event++, b, n, st, null));
            }
        }
        await(sch.stream(s, 0, "").allWork()); // the buffers' zero fills, before the measurement
        return batch;
    }

    /**
     * Device time of each session while the session of tenant {@code b} does the middle half of its work
     * (all three are backlogged then; the first quarter is left out, so a cold JIT does not count).
     * Sessions: a1 and a2 of tenant "a", b1 of tenant "b".
     */
    static long[] shareOfThree(int weightA, int weightB) throws Exception {
        try (SchedulerFixture f = new SchedulerFixture(1)) {
            TestDevice dev = f.devices.getFirst();
            dev.jitter(false);
            Scheduler sch = f.scheduler;
            Session a1 = sch.openSession("a1", 10_000);
            Session a2 = sch.openSession("a2", 10_000);
            Session b1 = sch.openSession("b1", 10_000);
            a1.setTenant("a", weightA);
            a2.setTenant("a", weightA);
            b1.setTenant("b", weightB);
            Session[] who = {a1, a2, b1};
            List<List<CommandSpec>> work = new ArrayList<>();
            for (Session s : who) {
                work.add(backlog(sch, s));
            }
            dev.cost(c -> COST_NANOS);
            dev.hold();
            LongAdder[] deviceNanos = {new LongAdder(), new LongAdder(), new LongAdder()};
            int total = STREAMS * PER_STREAM;
            long[] atQuarter = new long[3];
            long[] window = new long[3];
            AtomicInteger bLeft = new AtomicInteger(total);
            CompletableFuture<Void> measured = new CompletableFuture<>();
            List<Event> all = new ArrayList<>();
            for (int i = 0; i < who.length; i++) {
                int at = i;
                all.addAll(sch.submit(who[i], work.get(i), e -> {
                    deviceNanos[at].add(e.deviceNanos());
                    if (at != 2) {
                        return;
                    }
                    int left = bLeft.decrementAndGet();
                    if (left == total * 3 / 4) {
                        for (int k = 0; k < 3; k++) {
                            atQuarter[k] = deviceNanos[k].sum();
                        }
                    } else if (left == total / 4) {
                        for (int k = 0; k < 3; k++) {
                            window[k] = deviceNanos[k].sum() - atQuarter[k];
                        }
                        measured.complete(null);
                    }
                }));
            }
            dev.open();
            measured.get(60, TimeUnit.SECONDS);
            for (Event e : all) {
                assertEquals(EventState.SUCCEEDED, await(e).state());
            }
            dev.cost(null);
            return window;
        }
    }

    @Test
    void twoSessionsOfATenantShareItsWeightWithATenantOfOneSession() throws Exception {
        long[] t = shareOfThree(1, 1);
        double tenants = (double) (t[0] + t[1]) / t[2];
        assertTrue(Math.abs(tenants - 1) <= 0.15,
                "device time tenant a (2 sessions) : tenant b (1 session) = " + tenants + " (expected: 1 within 15%)");
        double sessions = (double) t[0] / t[1];
        assertTrue(Math.abs(sessions - 1) <= 0.2,
                "device time a1:a2 = " + sessions + " (expected: 1 within 20%: a tenant's sessions share equally)");
    }

    @Test
    void tenantWeightsStillApplyWhateverTheirSessionCount() throws Exception {
        long[] t = shareOfThree(1, 2);
        double ratio = (double) t[2] / (t[0] + t[1]);
        assertTrue(Math.abs(ratio - 2) <= 0.3,
                "device time tenant b (weight 2) : tenant a (weight 1, 2 sessions) = " + ratio + " (expected: 2 within 15%)");
    }

    /**
     * The reserved last slot still goes to a session with nothing on the device when the flood is its own
     * tenant's (without authentication every session is tenant "default"), and when it is another's.
     */
    @Test
    void aPoliteSessionStartsAtOnceBesideAFloodOfItsOwnTenantOrAnother() throws Exception {
        for (String politeTenant : new String[] {"flooder", "other"}) {
            try (SchedulerFixture f = new SchedulerFixture(1, 1L << 24, 1L << 20, 4, System::nanoTime)) {
                TestDevice dev = f.devices.getFirst();
                // every command the same device time: the virtual times compared below must not depend on how long
                // the buffers' zero-fills happened to take (a slow first one put the polite tenant ahead of the flood)
                dev.cost(c -> 10_000);
                Scheduler sch = f.scheduler;
                Session flood = sch.openSession("flood", 10_000);
                Session polite = sch.openSession("polite", 10_000);
                flood.setTenant("flooder", 1);
                polite.setTenant(politeTenant, 1);
                List<CommandSpec> work = new ArrayList<>();
                long event = 1;
                for (int i = 0; i < 6; i++) {
                    Buffer b = sch.createBuffer(flood, DType.I64, new long[] {4}, "", "");
                    long st = sch.createStream(flood, "").handle();
                    for (int n = 0; n < 5; n++) {
                        work.add(fill(event++, b, n, st, null));
                    }
                }
                Buffer pb = sch.createBuffer(polite, DType.I64, new long[] {4}, "", "");
                await(sch.stream(flood, 0, "").allWork());
                await(sch.stream(polite, 0, "").allWork());
                dev.hold();
                List<Event> all = new ArrayList<>(sch.submit(flood, work, null));
                int queued = sch.devices().getFirst().queuedCommands();
                assertEquals(6 - 3, queued, "the flood holds 3 of 4 slots; the other first fills wait");
                dev.handed.clear();
                all.addAll(sch.submit(polite, List.of(fill(1, pb, 999, 0, null)), null));
                assertEquals(List.of(999L), dev.handed.stream().map(FairShareTest::tag).toList(),
                        "tenant " + politeTenant + ": the polite fill was handed to the device at once");
                assertEquals(queued, sch.devices().getFirst().queuedCommands());
                dev.open();
                for (Event e : all) {
                    assertEquals(EventState.SUCCEEDED, await(e).state());
                }
            }
        }
    }
}
