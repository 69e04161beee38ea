package dev.arrayd.scheduler;

import static dev.arrayd.scheduler.FairShareTest.await;
import static dev.arrayd.scheduler.FairShareTest.fill;
import static dev.arrayd.scheduler.FairShareTest.fillRanInline;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.DType;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The wait time the observer hears of (the queue-wait metric): from the moment a command's submission lets
 * go of it to the start of its device work. A command that runs inline at once waited for nothing; one held
 * on the stream's worker or behind a dependency counts that time.
 */
class CommandWaitTimeTest {

    @Test
    void zeroForACommandRunInlineAtOnceAndTheHeldTimeForOnesThatWaited() throws Exception {
        // one command on the device at a time: a second one waits in the device queue
        try (SchedulerFixture f = new SchedulerFixture(1, 1L << 24, 1L << 20, 1, System::nanoTime)) {
            TestDevice dev = f.devices.getFirst();
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("wait", 10_000);
            List<Long> waits = new CopyOnWriteArrayList<>();
            s.observer = (kind, kernel, device, stream, outcome, waitNanos, deviceNanos, bytes, submission) ->
                    waits.add(waitNanos); // told before the event settles
            Buffer a = sch.createBuffer(s, DType.I64, new long[] {4}, "", "");
            Buffer b = sch.createBuffer(s, DType.I64, new long[] {4}, "", "");
            long other = sch.createStream(s, "").handle();
            await(sch.stream(s, 0, "").allWork());
            dev.jitter(false);

            long event = 1;
            boolean ranInline = false;
            for (int i = 0; i < 64 && !ranInline; i++) { // the test device declines half the inline offers
                ranInline = fillRanInline(sch, s, dev, a, event++);
                if (ranInline) {
                    assertEquals(0L, waits.getLast(), "run inline at once: no wait");
                }
            }
            assertTrue(ranInline, "one of 64 short fills ran inline");

            int handed = dev.handed.size();
            int told = waits.size();
            // held at the worker's gate; then one in the device queue behind it (no free slot), and one behind
            // that one in its stream's order (waited for on the host: its predecessor is not on the device yet)
            dev.hold();
            Event onWorker = sch.submit(s, fill(event++, a, 2, 0, null), e -> { });
            while (dev.handed.size() == handed) {
                Thread.onSpinWait();
            }
            Event queued = sch.submit(s, fill(event++, b, 3, other, null), e -> { });
            Event behind = sch.submit(s, fill(event, b, 4, other, null), e -> { });
            long heldFrom = System.nanoTime();
            while (System.nanoTime() - heldFrom < 5_000_000) {
                Thread.onSpinWait(); // 5 ms held
            }
            dev.open();
            await(onWorker);
            await(queued);
            await(behind);
            assertEquals(told + 3, waits.size());
            assertTrue(waits.get(told) >= 5_000_000, "held on the worker: " + waits.get(told));
            assertTrue(waits.get(told + 1) >= 5_000_000, "in the device queue: " + waits.get(told + 1));
            assertTrue(waits.get(told + 2) >= 5_000_000, "behind a dependency: " + waits.get(told + 2));
        }
    }
}
