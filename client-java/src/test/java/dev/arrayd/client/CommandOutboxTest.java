package dev.arrayd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.Fill;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class CommandOutboxTest {

    /** Records what the outbox sends; fails the test if two threads ever send at once. */
    private static final class RecordingWire implements java.util.function.Consumer<ExecuteRequest> {
        final List<ExecuteRequest> sent = Collections.synchronizedList(new ArrayList<>());
        final List<Long> sequence = Collections.synchronizedList(new ArrayList<>());
        final List<Long> calls = Collections.synchronizedList(new ArrayList<>());
        final AtomicInteger inside = new AtomicInteger();
        volatile boolean overlapped;

        @Override
        public void accept(ExecuteRequest r) {
            if (inside.incrementAndGet() != 1) {
                overlapped = true;
            }
            sent.add(r);
            r.getBatch().getCommandsList().forEach(c -> sequence.add(c.getEvent()));
            inside.decrementAndGet();
        }
    }

    @Test
    void concurrentProducersAreSentOneAtATimeInIdOrder() throws Exception {
        RecordingWire wire = new RecordingWire();
        EventTable events = new EventTable();
        CommandOutbox outbox = new CommandOutbox(wire, events);
        int threads = 8;
        int perThread = 5_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            futures.add(pool.submit(() -> {
                for (int i = 0; i < perThread; i++) {
                    if (i % 100 == 99) {
                        outbox.submitCall(seq -> new CommandOutbox.OrderedCall() {
                            @Override
                            public void start() {
                                wire.calls.add(seq);
                            }

                            @Override
                            public void fail(Status status) {
                            }
                        });
                    } else {
                        outbox.submit(Command.newBuilder().setFill(Fill.newBuilder().setBuffer(1)));
                    }
                }
            }));
        }
        for (Future<?> f : futures) {
            f.get(30, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertTrue(!wire.overlapped, "onNext never called concurrently");
        // commands carry dense event ids in send order; ordered calls take no ids and go in send order
        List<Long> ids = new ArrayList<>(wire.sequence);
        int calls = threads * perThread / 100;
        assertEquals(threads * perThread - calls, ids.size());
        for (int i = 0; i < ids.size(); i++) {
            assertEquals(i + 1, ids.get(i), "command " + i);
        }
        List<Long> callSeqs = new ArrayList<>(wire.calls);
        assertEquals(calls, callSeqs.size());
        for (int i = 1; i < callSeqs.size(); i++) {
            assertTrue(callSeqs.get(i - 1) < callSeqs.get(i), "calls in send order");
        }
        assertTrue(wire.sent.size() < threads * perThread, "batched: " + wire.sent.size() + " batches");
        assertTrue(wire.sent.stream().allMatch(r -> r.getBatch().getCommandsCount() <= CommandOutbox.MAX_BATCH_COMMANDS));
        assertEquals(threads * perThread - threads * perThread / 100, events.pendingCount());
    }

    @Test
    void aTerminatedOutboxFailsEntriesInsteadOfSending() {
        RecordingWire wire = new RecordingWire();
        EventTable events = new EventTable();
        CommandOutbox outbox = new CommandOutbox(wire, events);
        outbox.terminate(Status.UNAVAILABLE.withDescription("gone"));
        EventTable.Pending p = outbox.submit(Command.newBuilder().setFill(Fill.newBuilder().setBuffer(1)));
        assertTrue(p.future.isCompletedExceptionally());
        assertEquals(0, wire.sent.size());
    }

    @Test
    void aReadsChunkDownloadsGoInBatchesOfTheirOwnAndSmallCommandsTogether() {
        RecordingWire wire = new RecordingWire();
        CommandOutbox outbox = new CommandOutbox(wire, new EventTable());
        var chunk = Command.newBuilder().setDownload(dev.arrayd.proto.v1.Download.newBuilder().setBuffer(1)
                .setSizeBytes(8 << 20));
        var small = Command.newBuilder().setDownload(dev.arrayd.proto.v1.Download.newBuilder().setBuffer(1)
                .setSizeBytes(1024));
        outbox.submitAll(List.of(chunk.clone(), chunk.clone(), chunk.clone()));
        assertEquals(List.of(1, 1, 1), wire.sent.stream().map(r -> r.getBatch().getCommandsCount()).toList(),
                "each 8 MiB download alone: the daemon holds a batch's downloads from the moment it reads it");
        wire.sent.clear();
        outbox.submitAll(List.of(small.clone(), small.clone(), small.clone()));
        assertEquals(List.of(3), wire.sent.stream().map(r -> r.getBatch().getCommandsCount()).toList());
    }
}
