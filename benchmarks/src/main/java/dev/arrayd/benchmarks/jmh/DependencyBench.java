package dev.arrayd.benchmarks.jmh;

import dev.arrayd.scheduler.CommandSpec;
import dev.arrayd.scheduler.Event;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Dependency tracking with dependencies still pending: a chain of 64 commands submitted in one batch
 * while the device holds them, then released one after another as each completes. Per command: the
 * explicit wait, the read-after-write and write-after-write hazards on a buffer (or the stream order
 * alone), the count-down and the release.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class DependencyBench {

    static final int CHAIN = 64;

    private SchedulerFixture f;

    @Setup
    public void setUp() {
        f = new SchedulerFixture(true);
    }

    @TearDown
    public void tearDown() {
        f.close();
    }

    /** Each command reads and writes the same buffer and waits on the one before. */
    @Benchmark
    @OperationsPerInvocation(CHAIN)
    public int bufferChainOf64() {
        List<CommandSpec> batch = new ArrayList<>(CHAIN);
        long prev = 0;
        for (int i = 0; i < CHAIN; i++) {
            long id = f.nextEvent();
            batch.add(i == 0 ? f.touchLaunch() : f.touchLaunch(new long[] {prev}));
            prev = id;
        }
        List<Event> events = f.scheduler.submit(f.session, batch, null);
        int n = f.device.drainAll();
        if (!events.getLast().isDone()) {
            throw new IllegalStateException("chain not finished after draining");
        }
        return n;
    }

    /** Each command waits on the 4 commands before it (fan-in), no buffers. */
    @Benchmark
    @OperationsPerInvocation(CHAIN)
    public int fanInOf4() {
        List<CommandSpec> batch = new ArrayList<>(CHAIN);
        long first = f.nextEvent();
        for (int i = 0; i < CHAIN; i++) {
            int k = Math.min(i, 4);
            long[] waits = new long[k];
            for (int j = 0; j < k; j++) {
                waits[j] = first + i - 1 - j;
            }
            batch.add(f.emptyLaunch(waits));
        }
        List<Event> events = f.scheduler.submit(f.session, batch, null);
        int n = f.device.drainAll();
        if (!events.getLast().isDone()) {
            throw new IllegalStateException("fan-in not finished after draining");
        }
        return n;
    }
}
