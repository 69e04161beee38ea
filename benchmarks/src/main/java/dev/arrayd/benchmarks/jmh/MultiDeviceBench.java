package dev.arrayd.benchmarks.jmh;

import dev.arrayd.scheduler.CommandSpec;
import dev.arrayd.scheduler.Event;
import dev.arrayd.scheduler.Graph;
import dev.arrayd.scheduler.GraphReplay;
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
 * The scheduler's cost per command with two devices: a launch naming no device (placed: queued work,
 * transfer cost and history compared on both devices) on a buffer (replica checked, hazards tracked),
 * dispatched and completed; and a recorded graph of 64 such launches replayed (no validation).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class MultiDeviceBench {

    static final int GRAPH = 64;

    private SchedulerFixture f;
    private Graph graph;

    @Setup
    public void setUp() {
        f = new SchedulerFixture(false, 2);
        List<CommandSpec> commands = new ArrayList<>(GRAPH);
        for (int i = 0; i < GRAPH; i++) {
            commands.add(f.touchLaunch(i == 0 ? new long[0] : new long[] {f.nextEvent() - 1}));
        }
        graph = f.scheduler.recordGraph(f.session, commands);
    }

    @TearDown
    public void tearDown() {
        f.close();
    }

    /** One placed launch on a buffer: submit + place + coherence + track + dispatch (fast path) + complete. */
    @Benchmark
    public Event placedTouchLaunch() {
        return f.scheduler.submit(f.session, f.touchLaunch(), null);
    }

    /** A replay of a recorded graph of 64 placed launches; the score is per command. */
    @Benchmark
    @OperationsPerInvocation(GRAPH)
    public List<Event> replayGraphOf64() {
        return f.scheduler.replayGraph(f.session, graph.handle(),
                new GraphReplay(f.takeEvents(GRAPH), null, null, null, CommandSpec.NO_DEADLINE), null);
    }
}
