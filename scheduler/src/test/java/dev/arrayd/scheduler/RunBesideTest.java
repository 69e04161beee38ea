package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.DeviceCommand;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Which ready launches run inline. Short launches made ready together on one thread: the first runs there; a
 * later one expected to take at least {@link SchedulerConfig#BESIDE_MIN_NANOS} goes to its lane's worker to run
 * beside it, and cheaper ones run inline after it. Launches within the completion bound run inline only on a
 * thread completing a command. Counted by the test device's inline runs; the results checked too.
 */
class RunBesideTest {

    private static final long[] SET_7 = {1, 8, 15, 22};

    private static CommandSpec set(CompiledKernel k, long event, long[] waits, long stream, Buffer b) {
        return new CommandSpec(event, waits, stream, new CommandSpec.LaunchOp(k.handle(), new long[] {4}, null,
                List.of(SchedulerFixture.arg(b), SchedulerFixture.sc(7)), ""));
    }

    private static void await(List<Event> events) throws Exception {
        for (Event e : events) {
            Event done = e.toFuture().get(30, TimeUnit.SECONDS);
            assertEquals(EventState.SUCCEEDED, done.state(), () -> String.valueOf(done.failure()));
        }
    }

    /** Submits {@code batch}, with the device's gate held meanwhile when {@code hold}. */
    private static List<Event> submitHeld(Scheduler sch, Session s, TestDevice dev, boolean hold, List<CommandSpec> batch) {
        if (!hold) {
            return sch.submit(s, batch, null);
        }
        dev.hold();
        try {
            return sch.submit(s, batch, null);
        } finally {
            dev.open();
        }
    }

    /** Launches of {@code costNanos} each: the inline runs of a batch of two ready ones on two streams, of a
     * launch whose completion makes two more ready, and of a chain of three on one stream. */
    private static int[] inlineRuns(long costNanos) throws Exception {
        try (SchedulerFixture f = new SchedulerFixture(1)) {
            TestDevice dev = f.devices.getFirst();
            dev.jitter(false);
            dev.acceptEveryInlineRun(true);
            dev.cost(c -> c instanceof DeviceCommand.Launch ? costNanos : 0);
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("beside", 10_000);
            CompiledKernel set = f.compileAll(s).get("set");
            Buffer a = sch.createBuffer(s, DType.I64, new long[] {4}, "", "");
            Buffer b = sch.createBuffer(s, DType.I64, new long[] {4}, "", "");
            long s1 = sch.createStream(s, "").handle();
            long s2 = sch.createStream(s, "").handle();
            // the kernel's first run teaches the scheduler its cost (until then it is not short)
            await(sch.submit(s, List.of(set(set, 1, null, s1, a)), null));
            await(sch.submit(s, List.of(set(set, 2, null, s1, a)), null));

            int before = dev.inlineRuns();
            await(sch.submit(s, List.of(set(set, 3, null, s1, a), set(set, 4, null, s2, b)), null));
            int batch = dev.inlineRuns() - before;

            // A launch past the plain bound goes to a worker when the submission makes it ready: the gate keeps it
            // from finishing before the submission has released its dependents too (they would then be made ready
            // by the submission, not by its completion). A short one runs inline after the batch's releases.
            boolean toWorker = costNanos > SchedulerConfig.DEFAULT_FAST_PATH_NANOS;
            before = dev.inlineRuns();
            await(submitHeld(sch, s, dev, toWorker, List.of(set(set, 5, null, s1, a), set(set, 6, new long[] {5}, s1, a),
                    set(set, 7, new long[] {5}, s2, b))));
            int released = dev.inlineRuns() - before;

            before = dev.inlineRuns();
            await(submitHeld(sch, s, dev, toWorker, List.of(set(set, 8, null, s1, a), set(set, 9, new long[] {8}, s1, a),
                    set(set, 10, new long[] {9}, s1, b))));
            int chain = dev.inlineRuns() - before;
            assertArrayEquals(SET_7, f.readI64(s, a, 0, 11));
            assertArrayEquals(SET_7, f.readI64(s, b, 0, 12));
            return new int[] {batch, released, chain};
        }
    }

    @Test
    void launchesWorthAHandOffRunBesideTheOneRunInline() throws Exception {
        long cost = (SchedulerConfig.BESIDE_MIN_NANOS + SchedulerConfig.DEFAULT_FAST_PATH_NANOS) / 2;
        int[] runs = inlineRuns(cost);
        assertEquals(1, runs[0], "inline runs of a batch of two ready launches (the other on its lane's worker)");
        assertEquals(2, runs[1], "inline runs of a launch and the first of the two it made ready");
        assertEquals(3, runs[2], "inline runs of a chain of three");
    }

    @Test
    void longerLaunchesRunInlineOnlyOnAThreadCompletingACommand() throws Exception {
        long cost = SchedulerConfig.DEFAULT_FAST_PATH_NANOS * (1 + SchedulerConfig.COMPLETION_FAST_PATH_FACTOR) / 2;
        int[] runs = inlineRuns(cost);
        assertEquals(0, runs[0], "inline runs of a batch of two ready launches (made ready by the submission)");
        assertEquals(1, runs[1], "inline runs of a launch and the two it made ready (on the worker that completed it)");
        assertEquals(1, runs[2], "inline runs of a chain of three (one per completion: the second, on the worker "
                + "that completed the first)");
    }

    @Test
    void cheaperLaunchesRunInlineOneAfterTheOther() throws Exception {
        int[] runs = inlineRuns(SchedulerConfig.BESIDE_MIN_NANOS / 5);
        assertEquals(2, runs[0], "inline runs of a batch of two ready launches");
        assertEquals(3, runs[1], "inline runs of a launch and the two it made ready");
        assertEquals(3, runs[2], "inline runs of a chain of three");
    }
}
