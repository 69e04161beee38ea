package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.benchmarks.TaskBenchBreakdown.Where;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** The breakdown's reading of the scheduler's counters and its arithmetic per task. */
class TaskBenchBreakdownTest {

    @Test
    void threadsArePlacedByTheirNamesAsTheKernelKeepsThem() {
        assertEquals(Where.WORKERS, Where.daemon("arrayd-cpu0-str"));
        assertEquals(Where.WORKERS, Where.daemon("arrayd-cpu1-wor"));
        assertEquals(Where.COMPLETIONS, Where.daemon("arrayd-cpu0-com"));
        assertEquals(Where.DAEMON_GRPC, Where.daemon("grpc-default-wo"));
        assertEquals(Where.DAEMON_JIT, Where.daemon("C2 CompilerThre"));
        assertEquals(Where.DAEMON_GC, Where.daemon("G1 Conc#0"));
        assertEquals(Where.DAEMON_GC, Where.daemon("VM Thread"));
        assertEquals(Where.DAEMON_OTHER, Where.daemon("arrayd-lease-re"));
        assertEquals(Where.CLIENT_SUBMIT, Where.client("java"));
        assertEquals(Where.CLIENT_GRPC, Where.client("grpc-nio-worker"));
        assertEquals(Where.CLIENT_JIT, Where.client("C1 CompilerThre"));
        assertEquals(Where.CLIENT_OTHER, Where.client("bench-daemon-ou"));
    }

    @Test
    void sharesArePerTaskAndAddUpWithTheMachinesBusyAndIdleTime() {
        List<ThreadTimes.Thread> daemon = List.of(
                new ThreadTimes.Thread("arrayd-cpu0-str", 150_000, 40_000, 10),
                new ThreadTimes.Thread("arrayd-cpu0-str", 150_000, 20_000, 10),
                new ThreadTimes.Thread("arrayd-cpu0-com", 30_000, 6_000, 20),
                new ThreadTimes.Thread("grpc-default-wo", 20_000, 0, 4));
        List<ThreadTimes.Thread> client = List.of(new ThreadTimes.Thread("java", 10_000, 2_000, 2));
        // 10 tasks; busy 5 ticks = 50 ms in all of which ours is 0.36 ms; idle 1 tick
        TaskBenchBreakdown.Measured m = TaskBenchBreakdown.takeApart("stencil_1d", 8, 10, 1_000_000, 2, 0.4, 20_000,
                daemon, client, new ThreadTimes.Machine(5, 1));
        Map<Where, TaskBenchBreakdown.Share> s = m.shares();
        assertEquals(20.0, s.get(Where.KERNEL).runMicros(), 1e-9, "the kernel's 20 µs at the peak's speed");
        assertEquals(10.0, s.get(Where.WORKERS).runMicros(), 1e-9, "300 µs of workers less 10 x 20 µs, per task");
        assertEquals(6.0, s.get(Where.WORKERS).waitMicros(), 1e-9);
        assertEquals(2.0, s.get(Where.WORKERS).slices(), 1e-9);
        assertEquals(3.0, s.get(Where.COMPLETIONS).runMicros(), 1e-9);
        assertEquals(2.0, s.get(Where.COMPLETIONS).slices(), 1e-9);
        assertEquals(2.0, s.get(Where.DAEMON_GRPC).runMicros(), 1e-9);
        assertEquals(1.0, s.get(Where.CLIENT_SUBMIT).runMicros(), 1e-9);
        assertEquals((50_000_000 - 360_000) / 1e3 / 10, s.get(Where.OTHERS).runMicros(), 1e-9);
        assertEquals(1_000.0, s.get(Where.IDLE).runMicros(), 1e-9);
        assertTrue(Double.isNaN(s.get(Where.IDLE).waitMicros()) && Double.isNaN(s.get(Where.KERNEL).slices()));
        assertEquals(200.0, m.granularityMicros(), 1e-9, "1 ms x 2 cores / 10 tasks");
        assertEquals(36.0 + (50_000_000 - 360_000) / 1e4 + 1_000, m.accountedMicros(), 1e-6);
        String table = TaskBenchBreakdown.table(List.of(m));
        assertTrue(table.contains("| kernel (at the in-process peak's speed) | 20.0 | – | – |"), table);
        assertTrue(table.contains("| daemon: completion thread | 3.0 | 0.6 | 2.00 |"), table);
    }

    @Test
    void aKernelSlowerThanTheWorkersRanIsCutToWhatTheyRan() {
        TaskBenchBreakdown.Measured m = TaskBenchBreakdown.takeApart("g", 1, 2, 1_000, 2, 0.1, 50_000,
                List.of(new ThreadTimes.Thread("arrayd-cpu0-str", 60_000, 0, 1)), List.of(), new ThreadTimes.Machine(0, 0));
        assertEquals(30.0, m.shares().get(Where.KERNEL).runMicros(), 1e-9);
        assertEquals(0.0, m.shares().get(Where.WORKERS).runMicros(), 1e-9);
    }

    @Test
    void parsesSchedstatAndProcStatAndNamesWhatItCannotRead() {
        assertEquals(new ThreadTimes.Thread("t", 123, 45, 6), ThreadTimes.parseSchedstat("t", "123 45 6\n"));
        ThreadTimes.Machine m = ThreadTimes.parseStat("cpu  10 2 3 100 7 1 1 4 9 9\ncpu0 1 1 1 1 1 1 1 1 0 0\n");
        assertEquals(10 + 2 + 3 + 1 + 1 + 4, m.busyTicks(), "user nice system irq softirq steal; guest is in user");
        assertEquals(107, m.idleTicks(), "idle and iowait");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ThreadTimes.parseSchedstat("w", "1 2"));
        assertTrue(e.getMessage().contains("schedstat of w: \"1 2\""), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ThreadTimes.parseStat("intr 1 2 3"));
    }

    @Test
    void readsThisProcessesThreadsFromProc() throws Exception {
        long pid = ProcessHandle.current().pid();
        Assumptions.assumeTrue(ThreadTimes.available(pid), "no /proc/<pid>/task/<tid>/schedstat on this system");
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(threads.isCurrentThreadCpuTimeSupported(), "no thread CPU time in this JVM");
        ThreadTimes.Process before = ThreadTimes.of(pid);
        // 20 ms on a core, as the JVM counts this thread's CPU time (however busy the machine is)
        long until = threads.getCurrentThreadCpuTime() + 20_000_000;
        long x = 0;
        while (threads.getCurrentThreadCpuTime() < until) {
            x += System.nanoTime() & 1;
        }
        ThreadTimes.Process after = ThreadTimes.of(pid);
        long ran = after.since(before).stream().mapToLong(ThreadTimes.Thread::runNanos).sum();
        assertTrue(ran >= 19_000_000, "20 ms on a core counted as " + ran + " ns (" + x + ")");
        ThreadTimes.Machine m0 = ThreadTimes.machine();
        assertTrue(m0.busyTicks() > 0 && m0.idleTicks() >= 0);
    }

    @Test
    void wakeLatencyPercentilesAreOrdered() throws Exception {
        WakeLatency.Result r = WakeLatency.measure(200, 20_000);
        assertEquals(200, r.wakeUps());
        assertTrue(r.p10Micros() > 0 && r.p10Micros() <= r.p50Micros() && r.p50Micros() <= r.p90Micros()
                && r.p90Micros() <= r.p99Micros(), r.toString());
    }
}
