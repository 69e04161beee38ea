package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link Command}'s state machine (waiting → queued → running → done, with cancellation at any point) under
 * real threads: submitters on their own streams, a canceller picking ids at random, and the device's gate
 * opened and closed while they run, so that cancels race with readiness, queueing, dispatch and completion.
 * Against the model: every event settles exactly once; a command that succeeded ran exactly once, a
 * cancelled one at most once, and none twice; every failure is CANCELLED (its own or a stream
 * predecessor's does not pass on: stream order only orders); afterwards no command is queued or pending.
 */
class CommandStateProperties {

    @Property(tries = 25)
    void cancelsRacingWithDispatchAndCompletionSettleEachCommandOnce(
            @ForAll @IntRange(min = 1, max = 3) int submitters, @ForAll @IntRange(min = 1, max = 300) int perSubmitter,
            @ForAll @IntRange(min = 0, max = 4) int gateFlips) throws Exception {
        try (SchedulerFixture f = new SchedulerFixture(1, 1L << 24, 1L << 20, 2, System::nanoTime)) {
            TestDevice dev = f.devices.getFirst();
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("states", 10_000);
            Buffer b = sch.createBuffer(s, DType.I64, new long[] {4}, "", "");
            long[] streams = new long[submitters];
            for (int t = 0; t < submitters; t++) {
                streams[t] = sch.createStream(s, "").handle();
            }
            Map<Long, AtomicInteger> settled = new ConcurrentHashMap<>();
            Map<Long, Event> events = new ConcurrentHashMap<>();
            int total = submitters * perSubmitter;
            // the submit listener may still be running on another thread when an event's future completes: the
            // check below waits for every settlement it expects, then counts
            CountDownLatch allSettled = new CountDownLatch(total);
            EventListener count = e -> {
                settled.computeIfAbsent(e.id(), id -> new AtomicInteger()).incrementAndGet();
                allSettled.countDown();
            };
            AtomicReference<Throwable> problem = new AtomicReference<>();
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < submitters; t++) {
                int submitter = t;
                threads.add(Thread.ofPlatform().name("submitter-" + t).start(() -> {
                    try {
                        start.await();
                        for (int i = 0; i < perSubmitter; i++) {
                            long id = tag(submitter, i);
                            CommandSpec fill = new CommandSpec(id, null, streams[submitter],
                                    new CommandSpec.FillOp(b.handle(), KernelArg.Scalar.i64(id), 0, 0));
                            events.put(id, sch.submit(s, List.of(fill), count).getFirst());
                        }
                    } catch (Throwable e) {
                        problem.compareAndSet(null, e);
                    }
                }));
            }
            threads.add(Thread.ofPlatform().name("canceller").start(() -> {
                try {
                    start.await();
                    ThreadLocalRandom r = ThreadLocalRandom.current();
                    for (int i = 0; i < total / 3 + 1; i++) {
                        sch.cancel(s, new long[] {tag(r.nextInt(submitters), r.nextInt(perSubmitter))});
                    }
                } catch (Throwable e) {
                    problem.compareAndSet(null, e);
                }
            }));
            threads.add(Thread.ofPlatform().name("gate").start(() -> {
                try {
                    start.await();
                    for (int i = 0; i < gateFlips; i++) {
                        dev.hold();
                        Thread.yield();
                        dev.open();
                    }
                } catch (Throwable e) {
                    problem.compareAndSet(null, e);
                }
            }));
            start.countDown();
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(60));
                assertFalse(t.isAlive(), t.getName() + " finished");
            }
            dev.open();
            assertTrue(problem.get() == null, () -> String.valueOf(problem.get()));
            for (Event e : events.values()) {
                e.toFuture().get(60, TimeUnit.SECONDS);
            }
            assertTrue(allSettled.await(60, TimeUnit.SECONDS), "every submit listener ran");
            Map<Long, Integer> ran = new ConcurrentHashMap<>();
            for (DeviceCommand c : dev.executed) {
                if (c instanceof DeviceCommand.Fill fl && fl.pattern() != 0) { // 0: the buffer's own zero fill
                    ran.merge(fl.pattern(), 1, Integer::sum);
                }
            }
            assertEquals(total, events.size());
            for (Map.Entry<Long, Event> en : events.entrySet()) {
                long id = en.getKey();
                Event e = en.getValue();
                AtomicInteger n = settled.get(id);
                assertEquals(1, n == null ? 0 : n.get(), "event " + id + " settled once");
                int times = ran.getOrDefault(id, 0);
                assertTrue(times <= 1, "command " + id + " ran " + times + " times");
                if (e.state() == EventState.SUCCEEDED) {
                    assertEquals(1, times, "succeeded command " + id + " ran");
                } else {
                    assertEquals(ErrorCode.CANCELLED, e.failure().code(), () -> "event " + id + ": " + e.failure());
                }
            }
            assertEquals(0, sch.devices().getFirst().queuedCommands());
            sch.closeSession(s);
        }
    }

    /** Event id of submitter {@code t}'s command {@code i} (also its fill value, which tags what the device ran). */
    private static long tag(int t, int i) {
        return (t + 1) * 1_000_000L + i + 1;
    }
}
