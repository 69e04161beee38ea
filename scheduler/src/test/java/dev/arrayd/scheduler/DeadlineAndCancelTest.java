package dev.arrayd.scheduler;

import static dev.arrayd.scheduler.FairShareTest.await;
import static dev.arrayd.scheduler.FairShareTest.fill;
import static dev.arrayd.scheduler.FairShareTest.tag;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Deadlines and cancellation on a test device that holds its commands until told, with a fake clock:
 * one command is handed to the device at a time, the rest wait in the device queue.
 */
class DeadlineAndCancelTest {

    final AtomicLong clock = new AtomicLong(1_000);
    SchedulerFixture f;
    TestDevice dev;
    Scheduler sch;
    Session s;
    Buffer busy;
    Buffer a;
    Buffer b;
    Buffer scratch;
    long busyStream;
    long otherStream;

    @BeforeEach
    void setUp() throws Exception {
        f = new SchedulerFixture(1, 1L << 24, 1L << 20, 1, clock::get);
        dev = f.devices.getFirst();
        sch = f.scheduler;
        s = sch.openSession("deadlines", 10_000);
        busy = sch.createBuffer(s, DType.I64, new long[] {4}, "", "");
        a = sch.createBuffer(s, DType.I64, new long[] {4}, "", "");
        b = sch.createBuffer(s, DType.I64, new long[] {4}, "", "");
        scratch = sch.createBuffer(s, DType.I64, new long[] {1 << 14}, "", "scratch"); // 128 KiB
        busyStream = sch.createStream(s, "").handle();
        otherStream = sch.createStream(s, "").handle();
        await(sch.stream(s, 0, "").allWork());
        dev.hold();
        dev.executed.clear();
    }

    @AfterEach
    void tearDown() {
        f.close();
    }

    /** Occupies the device's only dispatch slot until {@link TestDevice#open()}. */
    private Event occupy(long event) {
        Event e = sch.submit(s, List.of(fill(event, busy, 1, busyStream, null)), null).getFirst();
        assertEquals(0, sch.devices().getFirst().queuedCommands());
        return e;
    }

    private CommandSpec withDeadline(long event, Buffer buf, long v, long stream, long deadline) {
        return new CommandSpec(event, null, stream, new CommandSpec.FillOp(buf.handle(), KernelArg.Scalar.i64(v), 0, 0),
                deadline, null);
    }

    private static ErrorCode code(Event e) {
        return e.failure() == null ? null : e.failure().code();
    }

    @Test
    void expiredQueuedCommandsFailWithDeadlineExceededAndSoDoTheirDependents() throws Exception {
        Event running = occupy(1);
        Event late = sch.submit(s, List.of(withDeadline(2, a, 42, 0, 1_500)), null).getFirst();
        // reads `a` after `late` wrote it: a data dependency, so it fails with the same cause
        Event reader = sch.submit(s, List.of(new CommandSpec(3, null, otherStream,
                new CommandSpec.CopyOp(a.handle(), b.handle(), 0, 0, 0))), null).getFirst();
        assertEquals(1, sch.devices().getFirst().queuedCommands());
        assertEquals(0, sch.expireDeadlines(), "not yet");
        clock.set(1_500);
        // this call or the scheduler's own deadline timer (armed for 1 500) expires it, whichever comes first
        assertTrue(sch.expireDeadlines() <= 1);
        assertEquals(EventState.FAILED, await(late).state());
        assertEquals(ErrorCode.DEADLINE_EXCEEDED, code(late));
        assertEquals(EventState.FAILED, await(reader).state());
        assertEquals(ErrorCode.DEADLINE_EXCEEDED, code(reader), "the dependent keeps the root cause's code");
        assertTrue(reader.failure().getMessage().contains("event 2"), reader.failure().getMessage());
        assertEquals(0, sch.devices().getFirst().queuedCommands(), "its queue slot is free");
        dev.open();
        assertEquals(EventState.SUCCEEDED, await(running).state(), "the running command was not touched");
        assertEquals(List.of(1L), dev.executed.stream().map(FairShareTest::tag).toList(), "nothing expired ran");
    }

    /** On the real clock, nobody calls expireDeadlines: the timer armed for the deadline drops the command. */
    @Test
    void theTimerArmedForAQueuedDeadlineDropsTheCommandOnTheRealClock() throws Exception {
        try (SchedulerFixture real = new SchedulerFixture(1, 1L << 24, 1L << 20, 1, System::nanoTime)) {
            Scheduler rs = real.scheduler;
            Session rsess = rs.openSession("real-clock", 10_000);
            Buffer x = rs.createBuffer(rsess, DType.I64, new long[] {4}, "", "");
            Buffer y = rs.createBuffer(rsess, DType.I64, new long[] {4}, "", "");
            long st = rs.createStream(rsess, "").handle();
            await(rs.stream(rsess, 0, "").allWork());
            TestDevice d = real.devices.getFirst();
            d.hold();
            Event running = rs.submit(rsess, List.of(fill(1, x, 1, st, null)), null).getFirst();
            long deadline = System.nanoTime() + 20_000_000; // 20 ms
            Event queued = rs.submit(rsess, List.of(new CommandSpec(2, null, 0, new CommandSpec.FillOp(y.handle(),
                    KernelArg.Scalar.i64(7), 0, 0), deadline, null)), null).getFirst();
            assertEquals(1, rs.devices().getFirst().queuedCommands());
            Event e = queued.toFuture().get(10, TimeUnit.SECONDS); // settles without the device letting go
            assertEquals(ErrorCode.DEADLINE_EXCEEDED, code(e));
            assertTrue(System.nanoTime() >= deadline);
            d.open();
            assertEquals(EventState.SUCCEEDED, await(running).state());
            rs.closeSession(rsess);
        }
    }

    @Test
    void aCommandThatBecomesReadyAfterItsDeadlineNeverRuns() throws Exception {
        Event running = occupy(1);
        // waits for the running command (stream order), so it is not queued yet when the clock moves
        Event waiting = sch.submit(s, List.of(withDeadline(2, a, 42, busyStream, 1_200)), null).getFirst();
        clock.set(2_000);
        dev.open();
        assertEquals(EventState.SUCCEEDED, await(running).state());
        assertEquals(EventState.FAILED, await(waiting).state());
        assertEquals(ErrorCode.DEADLINE_EXCEEDED, code(waiting));
        assertEquals(List.of(1L), dev.executed.stream().map(FairShareTest::tag).toList());
    }

    @Test
    void aDeadlineNotPassedChangesNothing() throws Exception {
        occupy(1);
        Event e = sch.submit(s, List.of(withDeadline(2, a, 42, 0, 10_000)), null).getFirst();
        clock.set(9_999);
        assertEquals(0, sch.expireDeadlines());
        dev.open();
        assertEquals(EventState.SUCCEEDED, await(e).state());
    }

    @Test
    void cancellingQueuedCommandsFreesTheirQueueSlotsAndMemoryAtOnce() throws Exception {
        Event running = occupy(1);
        long usedWithScratch = sch.devices().getFirst().pool().stats().usedBytes();
        List<Event> queued = sch.submit(s, List.of(
                fill(2, scratch, 5, otherStream, null),
                new CommandSpec(3, null, otherStream, new CommandSpec.CopyOp(scratch.handle(), scratch.handle(), 0, 64, 64))),
                null);
        assertEquals(1, sch.devices().getFirst().queuedCommands(), "the fill is queued, the copy waits for it");
        sch.destroyBuffer(s, scratch.handle());
        // freed for accounting at once; the block is fenced: whoever gets it next waits for these commands
        assertTrue(sch.devices().getFirst().pool().stats().usedBytes() < usedWithScratch, "scratch memory freed at once");
        assertEquals(2, sch.cancel(s, new long[] {2, 3, 77}));
        for (Event e : queued) {
            assertEquals(EventState.FAILED, await(e).state());
            assertEquals(ErrorCode.CANCELLED, code(e));
        }
        assertEquals(0, sch.devices().getFirst().queuedCommands(), "queue slots freed");
        // what is left (the running command) goes with the session's call
        assertEquals(1, sch.cancelPending(s, new ArraydException(ErrorCode.CANCELLED, "the call was cancelled")));
        assertFalse(running.isDone(), "the running command is still running");
        dev.open();
        assertEquals(EventState.FAILED, await(running).state(), "its result is dropped");
        assertEquals(ErrorCode.CANCELLED, code(running));
        assertEquals(List.of(1L), dev.executed.stream().map(FairShareTest::tag).toList(),
                "only the command already running ran");
    }

    @Test
    void aCancelledRunningCommandFinishesAndItsResultIsDiscarded() throws Exception {
        Event running = occupy(1);
        Event download = sch.submit(s, List.of(new CommandSpec(2, null, busyStream,
                new CommandSpec.DownloadOp(busy.handle(), 0, 0, Long.MAX_VALUE))), null).getFirst();
        assertEquals(1, sch.cancel(s, new long[] {1}));
        assertFalse(running.isDone());
        dev.open();
        assertEquals(EventState.FAILED, await(running).state());
        assertEquals(ErrorCode.CANCELLED, code(running));
        assertEquals(ErrorCode.CANCELLED, code(await(download)), "what read its result fails with the cause");
        assertEquals(1, dev.executed.stream().filter(c -> tag(c) == 1).count(), "it did run on the device");
    }

    @Test
    void cancellingAWaitingCommandKeepsTheOrderOfWhatFollowsIt() throws Exception {
        Event running = occupy(1);
        // 2 waits for 1 (stream order); 3 overwrites busy after 2 wrote it (write-after-write on 2 only)
        Event second = sch.submit(s, List.of(fill(2, busy, 2, busyStream, null)), null).getFirst();
        Event third = sch.submit(s, List.of(fill(3, busy, 3, otherStream, null)), null).getFirst();
        sch.cancel(s, new long[] {2});
        assertFalse(second.isDone(), "it fails once what it waits for is done, not before");
        assertFalse(third.isDone());
        dev.open();
        assertEquals(ErrorCode.CANCELLED, code(await(second)));
        assertEquals(EventState.SUCCEEDED, await(third).state());
        assertEquals(List.of(1L, 3L), dev.executed.stream().map(FairShareTest::tag).toList(),
                "3 ran after 1, never beside it");
    }
}
