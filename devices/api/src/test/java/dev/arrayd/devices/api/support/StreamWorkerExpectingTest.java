package dev.arrayd.devices.api.support;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * A worker that expects work stays awake (yielding) after a command instead of parking, but only once per
 * command and at most {@link StreamWorker#EXPECT_SPIN_NANOS}: a stream whose callbacks elsewhere never end
 * still parks.
 */
class StreamWorkerExpectingTest {

    /**
     * Completes every command at once; expects work while {@code expecting} is set. Its fields have no
     * initializers: the worker starts in the super constructor, before a subclass's initializers would run.
     */
    static final class ExpectingStream extends StreamWorkerRetireTest.InstantStream {
        volatile boolean expecting;
        volatile Thread worker;

        ExpectingStream() {
            super(0); // one worker for the stream's life
        }

        @Override
        protected void threadStarted() {
            super.threadStarted();
            worker = Thread.currentThread();
        }

        @Override
        protected boolean expectingWork() {
            return expecting;
        }
    }

    /** Waits (at most 10 s) until the worker has parked; false if it never does. */
    private static boolean parks(Thread t) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < until) {
            Thread.State s = t.getState();
            if (s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING) {
                return true;
            }
            LockSupport.parkNanos(100_000);
        }
        return false;
    }

    @Test
    void aWorkerExpectingWorkForeverStillParksAfterEachCommand() throws Exception {
        try (ExpectingStream s = new ExpectingStream()) {
            s.expecting = true;
            for (int i = 0; i < 3; i++) {
                CountDownLatch done = new CountDownLatch(1);
                s.submit(StreamWorkerRetireTest.COMMAND, StreamWorkerRetireTest.countingDown(done));
                assertTrue(done.await(10, TimeUnit.SECONDS));
                assertTrue(parks(s.worker), "the worker spun on after command " + i + ": " + s.worker.getState());
            }
        }
    }
}
