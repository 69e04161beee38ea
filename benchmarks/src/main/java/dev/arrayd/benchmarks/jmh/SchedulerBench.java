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
 * The scheduler's cost per command: submit (validate, register the event, order on the stream),
 * dispatch and complete, on a device that completes at once. Alone and in batches of 64, as the
 * session stream delivers them.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SchedulerBench {

    static final int BATCH = 64;

    private SchedulerFixture f;

    @Setup
    public void setUp() {
        f = new SchedulerFixture(false);
    }

    @TearDown
    public void tearDown() {
        f.close();
    }

    /**
     * One empty launch submitted alone (as a request of one command is): submit + track + dispatch (fast path) +
     * complete.
     */
    @Benchmark
    public Event submitOne() {
        return f.scheduler.submit(f.session, f.emptyLaunch(), null);
    }

    /** A batch of 64 empty launches; the score is per command. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public List<Event> submitBatchOf64() {
        List<CommandSpec> batch = new ArrayList<>(BATCH);
        for (int i = 0; i < BATCH; i++) {
            batch.add(f.emptyLaunch());
        }
        return f.scheduler.submit(f.session, batch, null);
    }
}
