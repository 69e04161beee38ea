package dev.arrayd.scheduler;

import static dev.arrayd.scheduler.FairShareTest.await;
import static dev.arrayd.scheduler.FairShareTest.fill;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.arrayd.devices.api.DType;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** A device's busy time (the utilization metrics' source), on a clock the test moves. */
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
}
