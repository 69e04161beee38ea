package dev.arrayd.devices.api.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.MemRef;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * A stream costs a thread only while it works: its worker starts with the first entry, retires after the idle
 * time, and the next entry starts another; no entry is ever left without a worker, however offers and
 * retirements interleave.
 */
class StreamWorkerRetireTest {

    /** Completes every command at once on its worker; counts worker threads started and ended. */
    static class InstantStream extends HostStreamWorker {
        final AtomicInteger started = new AtomicInteger();
        final AtomicInteger ended = new AtomicInteger();
        final AtomicInteger setUps = new AtomicInteger();
        final AtomicInteger tearDowns = new AtomicInteger();

        InstantStream(long idleRetireNanos) {
            super(new DeviceId("test", 0), "retire", "test", 0, idleRetireNanos, new Object(), "test marker");
            start();
        }

        @Override
        protected void execute(DeviceCommand command, CommandCallback callback) {
            complete(command, callback, 1, null);
        }

        @Override
        protected void threadStarted() {
            started.incrementAndGet();
        }

        @Override
        protected void threadEnded() {
            ended.incrementAndGet();
        }

        @Override
        protected void setUp() {
            setUps.incrementAndGet();
        }

        @Override
        protected void tearDown() {
            tearDowns.incrementAndGet();
        }
    }

    static final DeviceCommand COMMAND = new DeviceCommand.Fill(new MemRef(1, 0, 4), 0, 4);

    /** A callback that counts {@code latch} down on completion and fails the test on failure. */
    static CommandCallback countingDown(CountDownLatch latch) {
        return new CommandCallback() {
            @Override
            public void completed(long deviceNanos) {
                latch.countDown();
            }

            @Override
            public void failed(ArraydException cause) {
                throw new AssertionError(cause);
            }
        };
    }

    /** Submits and waits for one command. */
    static void run(InstantStream s) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        s.submit(COMMAND, countingDown(done));
        assertTrue(done.await(30, TimeUnit.SECONDS), "command did not complete");
    }

    /** Polls (1 ms apart, at most 30 s) until the stream has no worker. */
    static void awaitRetired(InstantStream s) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (s.currentWorker() != null) {
            assertTrue(System.nanoTime() < deadline, "the worker did not retire within 30 s");
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    @Test
    void anIdleStreamHoldsNoThreadAndTheNextCommandStartsOne() throws Exception {
        InstantStream s = new InstantStream(TimeUnit.MILLISECONDS.toNanos(20));
        try {
            assertNull(s.currentWorker(), "no worker before the first command");
            run(s);
            Thread first = s.currentWorker();
            awaitRetired(s);
            first.join(TimeUnit.SECONDS.toMillis(30));
            assertTrue(!first.isAlive(), "the retired worker ended");
            run(s); // served by a new worker
            assertEquals(1, s.setUps.get(), "set up once per stream");
            assertEquals(0, s.tearDowns.get(), "torn down only when closed");
        } finally {
            s.close();
        }
        assertEquals(1, s.tearDowns.get());
        assertEquals(s.started.get(), s.ended.get(), "every worker ended");
        assertTrue(s.started.get() >= 2, "workers: " + s.started.get());
    }

    @Test
    void aStreamNeverUsedIsTornDownByItsClose() {
        InstantStream s = new InstantStream(TimeUnit.SECONDS.toNanos(5));
        s.close();
        assertEquals(1, s.tearDowns.get());
        assertEquals(1, s.started.get());
        assertEquals(1, s.ended.get());
    }

    @Test
    void aStreamThatNeverRetiresStartsItsWorkerAtOnce() {
        InstantStream s = new InstantStream(0);
        try {
            assertNotNull(s.currentWorker(), "started with the stream");
        } finally {
            s.close();
        }
        assertEquals(1, s.setUps.get());
        assertEquals(1, s.tearDowns.get());
        assertEquals(1, s.started.get());
    }

    /**
     * One producer, each command waited for before the next, against a worker that retires as soon as it finds
     * nothing: nearly every offer meets a retiring worker, and no later offer rescues a command left behind.
     */
    @Test
    void aCommandOfferedWhileTheWorkerRetiresIsServed() throws Exception {
        InstantStream s = new InstantStream(1);
        try {
            for (int i = 0; i < 10_000; i++) {
                CountDownLatch done = new CountDownLatch(1);
                s.submit(COMMAND, countingDown(done));
                assertTrue(done.await(10, TimeUnit.SECONDS), "command " + i + " was left without a worker");
            }
        } finally {
            s.close();
        }
        assertEquals(s.started.get(), s.ended.get(), "every worker ended");
    }

    /** Offers from several threads, with pauses around the retire time, against a worker that retires after 50 µs. */
    @Test
    void noCommandIsLeftWithoutAWorkerWhileWorkersRetire() throws Exception {
        InstantStream s = new InstantStream(TimeUnit.MICROSECONDS.toNanos(50));
        int producers = 4;
        int perProducer = 5_000;
        CountDownLatch all = new CountDownLatch(producers * perProducer);
        List<Thread> threads = new ArrayList<>();
        try {
            for (int p = 0; p < producers; p++) {
                Thread t = new Thread(() -> {
                    ThreadLocalRandom r = ThreadLocalRandom.current();
                    for (int i = 0; i < perProducer; i++) {
                        s.submit(COMMAND, countingDown(all));
                        if (r.nextInt(8) == 0) {
                            LockSupport.parkNanos(r.nextLong(20_000, 300_000)); // around the retire time
                        }
                    }
                });
                threads.add(t);
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
            assertTrue(all.await(60, TimeUnit.SECONDS), "left " + all.getCount() + " of " + producers * perProducer);
        } finally {
            s.close();
        }
        assertEquals(0, all.getCount());
        assertTrue(s.started.get() > 2, "workers started: " + s.started.get() + " (the test needs retirements to race with)");
        assertEquals(s.started.get(), s.ended.get(), "every worker ended");
        assertEquals(1, s.tearDowns.get());
    }
}
