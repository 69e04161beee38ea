package dev.arrayd.devices.api.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link CommandQueue} under real threads: producers offer at once while one consumer polls, and the
 * consumer sees every entry exactly once, each producer's entries in the order it offered them (the
 * model: one FIFO per producer, interleaved in any way), and the queue empty at the end.
 */
class CommandQueueStressProperties {

    /** An entry, as its callback: which producer offered it, and its place in that producer's sequence. */
    private record Tag(int producer, int seq) implements CommandCallback {
        @Override
        public void completed(long deviceNanos) {
        }

        @Override
        public void failed(ArraydException cause) {
        }
    }

    @Property(tries = 30)
    void everyEntryOnceInEachProducersOrder(@ForAll @IntRange(min = 1, max = 6) int producers,
            @ForAll @IntRange(min = 1, max = 20_000) int perProducer) throws Exception {
        CommandQueue queue = new CommandQueue();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int producer = p;
            threads.add(Thread.ofPlatform().name("producer-" + p).start(() -> {
                await(start);
                for (int i = 0; i < perProducer; i++) {
                    queue.offer(null, new Tag(producer, i));
                    if (i % 97 == 0) {
                        Thread.yield(); // vary the interleavings
                    }
                }
            }));
        }
        int[] next = new int[producers];
        AtomicReference<String> problem = new AtomicReference<>();
        int total = producers * perProducer;
        Thread consumer = Thread.ofPlatform().name("consumer").start(() -> {
            await(start);
            int seen = 0;
            while (seen < total) {
                CommandQueue.Node n = queue.poll();
                if (n == null) {
                    Thread.onSpinWait();
                    continue;
                }
                Tag t = (Tag) n.callback();
                n.release();
                if (t.seq() != next[t.producer()]) {
                    problem.compareAndSet(null, "producer " + t.producer() + ": entry " + t.seq() + " after "
                            + (next[t.producer()] - 1));
                }
                next[t.producer()] = t.seq() + 1;
                seen++;
            }
        });
        start.countDown();
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(60));
        }
        consumer.join(TimeUnit.SECONDS.toMillis(60));
        assertTrue(!consumer.isAlive(), "the consumer saw all " + total + " entries");
        assertNull(problem.get());
        for (int p = 0; p < producers; p++) {
            assertEquals(perProducer, next[p], "entries of producer " + p);
        }
        assertTrue(queue.isEmpty());
        assertNull(queue.poll());
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
