package dev.arrayd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.Fill;
import dev.arrayd.proto.v1.ReplayGraphRequest;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link CommandOutbox} under real threads, against its model: producers submit commands, replays and
 * ordered calls at once, one of them may terminate the outbox part way; the wire must see what was sent in
 * send order (event ids dense and increasing, calls and replays in their places), never two sends at once,
 * and every entry must end exactly once: sent, or failed with the terminal status.
 */
class CommandOutboxStressProperties {

    /** What reached the wire, in order; flags overlapping sends. */
    private static final class Wire implements java.util.function.Consumer<ExecuteRequest> {
        final List<String> log = Collections.synchronizedList(new ArrayList<>());
        final List<Long> ids = Collections.synchronizedList(new ArrayList<>());
        final AtomicInteger inside = new AtomicInteger();
        volatile boolean overlapped;

        @Override
        public void accept(ExecuteRequest r) {
            if (inside.incrementAndGet() != 1) {
                overlapped = true;
            }
            if (r.hasBatch()) {
                r.getBatch().getCommandsList().forEach(c -> ids.add(c.getEvent()));
            } else if (r.hasReplay()) {
                for (int i = 0; i < 3; i++) {
                    ids.add(r.getReplay().getFirstEvent() + i);
                }
            }
            inside.decrementAndGet();
        }
    }

    @Property(tries = 25)
    void everyEntryEndsOnceAndTheWireSeesSendOrder(@ForAll @IntRange(min = 1, max = 6) int producers,
            @ForAll @IntRange(min = 1, max = 3_000) int perProducer, @ForAll @IntRange(min = 0, max = 2) int terminateBy)
            throws Exception {
        Wire wire = new Wire();
        EventTable events = new EventTable();
        CommandOutbox outbox = new CommandOutbox(wire, events);
        AtomicInteger callsStarted = new AtomicInteger();
        AtomicInteger callsFailed = new AtomicInteger();
        List<Long> callSeqs = Collections.synchronizedList(new ArrayList<>());
        List<EventTable.Pending> pendings = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int producer = p;
            threads.add(Thread.ofPlatform().name("producer-" + p).start(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < perProducer; i++) {
                    if (producer < terminateBy && i == perProducer / 2) {
                        outbox.terminate(Status.UNAVAILABLE.withDescription("terminated by producer " + producer));
                    }
                    switch (i % 50) {
                        case 17 -> outbox.submitCall(seq -> new CommandOutbox.OrderedCall() {
                            @Override
                            public void start() {
                                callSeqs.add(seq);
                                callsStarted.incrementAndGet();
                            }

                            @Override
                            public void fail(Status status) {
                                callsFailed.incrementAndGet();
                            }
                        });
                        case 31 -> pendings.addAll(outbox.replay(ReplayGraphRequest.newBuilder().setGraph(1), 3));
                        default -> pendings.add(outbox.submit(Command.newBuilder().setFill(Fill.newBuilder().setBuffer(1))));
                    }
                }
            }));
        }
        start.countDown();
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(60));
            assertFalse(t.isAlive(), t.getName() + " finished");
        }
        outbox.drain();
        assertFalse(wire.overlapped, "the wire is never called by two threads at once");
        // sent ids are dense, increasing, and each was sent once
        List<Long> ids = new ArrayList<>(wire.ids);
        for (int i = 0; i < ids.size(); i++) {
            assertEquals(i + 1, ids.get(i), "id sent at position " + i);
        }
        List<Long> seqs = new ArrayList<>(callSeqs);
        for (int i = 1; i < seqs.size(); i++) {
            assertTrue(seqs.get(i - 1) < seqs.get(i), "ordered calls start in send order");
        }
        int callsPerProducer = perProducer / 50 + (perProducer % 50 > 17 ? 1 : 0);
        assertEquals(producers * callsPerProducer, callsStarted.get() + callsFailed.get(), "every call ended once");
        // every event registered was either sent (and stays pending: no daemon answers) or failed by the terminal status
        long failed = pendings.stream().filter(p -> p.future.isCompletedExceptionally()).count();
        assertEquals(pendings.size(), ids.size() + failed, "every event sent or failed, exactly once");
        if (terminateBy == 0) {
            assertEquals(0, failed);
            assertEquals(0, callsFailed.get());
        }
        assertEquals(ids.size(), events.pendingCount(), "the sent events wait for their completions");
    }
}
