package dev.arrayd.scheduler;

import static dev.arrayd.scheduler.FairShareTest.await;
import static dev.arrayd.scheduler.FairShareTest.fill;
import static dev.arrayd.scheduler.FairShareTest.fillRanInline;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.DType;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** A device's busy time (the utilization metrics' source), on a clock the test moves, and on the system clock. */
class DeviceBusyTimeTest {

    @Test
    void busyTimeGrowsOnlyWhileCommandsAreOnTheDeviceAndOnceHoweverManyStreams() throws Exception {
        AtomicLong clock = new AtomicLong(1_000_000);
        try (SchedulerFixture f = new SchedulerFixture(1, 1L << 24, 1L << 20, 0, clock::get)) {
            TestDevice dev = f.devices.getFirst();
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("busy", 10_000);
            Buffer a = sch.createBuffer(s, DType.I64, new long[] {4}, "", "");
            Buffer b = sch.createBuffer(s, DType.I64, new long[] {4}, "", "");
            long st1 = sch.createStream(s, "").handle();
            long st2 = sch.createStream(s, "").handle();
            await(sch.stream(s, 0, "").allWork());
            DeviceRuntime d = sch.devices().getFirst();

            long idle = d.busyNanos();
            clock.addAndGet(3_000_000);
            assertEquals(idle, d.busyNanos(), "an idle device's busy time stands still");

            dev.hold();
            int handedBefore = dev.handed.size();
            List<Event> events = sch.submit(s, List.of(fill(1, a, 1, st1, null), fill(2, b, 2, st2, null)), e -> { });
            while (dev.handed.size() < handedBefore + 2) {
                Thread.onSpinWait(); // both commands handed to the device (held there, not yet running)
            }
            clock.addAndGet(5_000_000);
            assertEquals(idle + 5_000_000, d.busyNanos(), "two streams at work at once count once");

            dev.open();
            for (Event e : events) {
                await(e);
            }
            long done = d.busyNanos();
            assertEquals(idle + 5_000_000, done);
            clock.addAndGet(7_000_000);
            assertEquals(done, d.busyNanos(), "idle again");
        }
    }

    /**
     * A short command run inline while nothing else is on the device adds exactly its device time (the clock is
     * not read for it); one the device declines to run inline waits on the stream's worker, and that wait counts.
     */
    @Test
    void aCommandRunInlineAloneAddsItsDeviceTimeAndOneOnTheWorkerItsInterval() throws Exception {
        try (SchedulerFixture f = new SchedulerFixture(1, 1L << 24, 1L << 20, 0, DeviceQueue.SYSTEM_CLOCK)) {
            TestDevice dev = f.devices.getFirst();
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("busy", 10_000);
            Buffer a = sch.createBuffer(s, DType.I64, new long[] {4}, "", "");
            await(sch.stream(s, 0, "").allWork());
            DeviceRuntime d = sch.devices().getFirst();
            dev.cost(c -> 3_000_000); // every command: 3 ms of device time, spun and reported
            dev.jitter(false);

            long event = 1;
            boolean ranInline = false;
            for (int i = 0; i < 64 && !ranInline; i++) { // the test device declines half the inline offers
                long before = d.busyNanos();
                ranInline = fillRanInline(sch, s, dev, a, event++);
                if (ranInline) {
                    assertEquals(before + 3_000_000, d.busyNanos(), "run inline alone: its busy time is its device time");
                } else {
                    assertTrue(d.busyNanos() - before >= 3_000_000, "on the worker: at least its device time");
                }
            }
            assertTrue(ranInline, "one of 64 short fills ran inline");

            long before = d.busyNanos();
            int handed = dev.handed.size();
            dev.hold(); // declines inline runs: the next fill goes to the stream's worker and waits at the gate
            Event waiting = sch.submit(s, fill(event, a, 2, 0, null), e -> { });
            while (dev.handed.size() == handed) {
                Thread.onSpinWait();
            }
            long heldFrom = System.nanoTime();
            while (System.nanoTime() - heldFrom < 5_000_000) {
                Thread.onSpinWait(); // 5 ms handed to the device and not yet running
            }
            dev.open();
            await(waiting);
            long added = d.busyNanos() - before;
            assertTrue(added >= 8_000_000, "the wait on the worker counts as busy, and the 3 ms it ran: " + added);
        }
    }
}
