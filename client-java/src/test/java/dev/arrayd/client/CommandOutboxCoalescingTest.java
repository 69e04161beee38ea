package dev.arrayd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.Upload;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** Launches behind many commands in flight wait for others to join their batch (CommandOutbox, "Coalescing"). */
class CommandOutboxCoalescingTest {

    /** Keeps the drains the outbox schedules, to run when the test says. */
    private static final class ManualTimer extends ScheduledThreadPoolExecutor {
        final List<Runnable> scheduled = Collections.synchronizedList(new ArrayList<>());

        ManualTimer() {
            super(1);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
            scheduled.add(task);
            return null;
        }

        void fire() {
            List<Runnable> tasks;
            synchronized (scheduled) {
                tasks = List.copyOf(scheduled);
                scheduled.clear();
            }
            tasks.forEach(Runnable::run);
        }
    }

    private final List<ExecuteRequest> sent = Collections.synchronizedList(new ArrayList<>());
    private final EventTable events = new EventTable();

    private static Command.Builder launch() {
        return Command.newBuilder().setLaunch(dev.arrayd.proto.v1.Launch.newBuilder().setKernel(1).addGlobalDims(1));
    }

    /** Sends {@code n} commands in one explicit batch: they are in flight (not completed) from then on. */
    private void inFlight(CommandOutbox outbox, int n) {
        List<Command.Builder> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            batch.add(launch());
        }
        outbox.submitAll(batch);
        sent.clear();
    }

    private List<Long> sentEvents() {
        List<Long> out = new ArrayList<>();
        synchronized (sent) {
            sent.forEach(r -> r.getBatch().getCommandsList().forEach(c -> out.add(c.getEvent())));
        }
        return out;
    }

    @Test
    void aLaunchWithFewInFlightGoesAtOnce() {
        ManualTimer timer = new ManualTimer();
        CommandOutbox outbox = new CommandOutbox(sent::add, events, timer);
        inFlight(outbox, CommandOutbox.COALESCE_IN_FLIGHT - 1);
        EventTable.Pending p = outbox.submit(launch());
        assertEquals(List.of(p.id), sentEvents());
        assertTrue(timer.scheduled.isEmpty());
    }

    @Test
    void aLaunchBehindManyInFlightWaitsForAQuarterOfThemOrTheTimer() {
        ManualTimer timer = new ManualTimer();
        CommandOutbox outbox = new CommandOutbox(sent::add, events, timer);
        inFlight(outbox, 100);
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            ids.add(outbox.submit(launch()).id);
        }
        assertEquals(List.of(), sentEvents(), "24 launches behind 100 in flight were sent before a quarter had queued");
        assertEquals(1, timer.scheduled.size(), "one drain scheduled for all of them");
        ids.add(outbox.submit(launch()).id);
        assertEquals(ids, sentEvents(), "the 25th launch sends the 25 in one batch");
        assertEquals(1, sent.size());

        sent.clear();
        long late = outbox.submit(launch()).id;
        assertEquals(List.of(), sentEvents());
        timer.fire();
        assertEquals(List.of(late), sentEvents(), "the timer's drain sends what waited");
    }

    @Test
    void blockingOnAnUnsentLaunchSendsIt() throws Exception {
        ManualTimer timer = new ManualTimer();
        CommandOutbox outbox = new CommandOutbox(sent::add, events, timer);
        inFlight(outbox, 100);
        EventTable.Pending p = outbox.submit(launch());
        assertEquals(List.of(), sentEvents());
        assertThrows(TimeoutException.class, () -> p.future.get(1, TimeUnit.MILLISECONDS));
        assertEquals(List.of(p.id), sentEvents(), "get() on the future of a held launch sent it");

        sent.clear();
        EventTable.Pending q = outbox.submit(launch());
        Thread joiner = Thread.ofPlatform().start(() -> q.future.join());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (sentEvents().isEmpty() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(List.of(q.id), sentEvents(), "join() on the future of a held launch sent it");
        events.fail(q.id, io.grpc.Status.CANCELLED);
        joiner.join();
    }

    @Test
    void otherCommandsGoAtOnceWithWhatWaitsBeforeThem() {
        ManualTimer timer = new ManualTimer();
        CommandOutbox outbox = new CommandOutbox(sent::add, events, timer);
        inFlight(outbox, 100);
        long held = outbox.submit(launch()).id;
        long upload = outbox.submit(Command.newBuilder().setUpload(Upload.newBuilder().setBuffer(1))).id;
        assertEquals(List.of(held, upload), sentEvents());
    }

    @Test
    void withoutATimerEveryLaunchGoesAtOnce() {
        CommandOutbox outbox = new CommandOutbox(sent::add, events);
        inFlight(outbox, 100);
        long id = outbox.submit(launch()).id;
        assertEquals(List.of(id), sentEvents());
    }

    @Test
    void concurrentProducersBehindManyInFlightAreAllSentInOrderByARealTimer() throws Exception {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
        try {
            int threads = 4;
            int perThread = 2_000;
            CountDownLatch all = new CountDownLatch(threads * perThread);
            CommandOutbox outbox = new CommandOutbox(r -> {
                sent.add(r);
                r.getBatch().getCommandsList().forEach(c -> {
                    if (c.getEvent() > 200) {
                        all.countDown(); // (the 200 in flight before them are not the producers')
                    }
                });
            }, events, timer);
            inFlight(outbox, 200);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            List<Future<?>> producers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                producers.add(pool.submit(() -> {
                    for (int i = 0; i < perThread; i++) {
                        outbox.submit(launch());
                    }
                }));
            }
            for (Future<?> f : producers) {
                f.get(60, TimeUnit.SECONDS);
            }
            pool.shutdown();
            assertTrue(all.await(60, TimeUnit.SECONDS), "commands left unsent: " + all.getCount());
            List<Long> ids = sentEvents();
            assertEquals(threads * perThread, ids.size());
            for (int i = 1; i < ids.size(); i++) {
                assertTrue(ids.get(i) > ids.get(i - 1), "sent out of order at " + i + ": " + ids.get(i - 1) + ", "
                        + ids.get(i));
            }
            assertFalse(sent.size() >= ids.size(), "no batching at all: " + sent.size() + " messages");
        } finally {
            timer.shutdownNow();
        }
    }
}
