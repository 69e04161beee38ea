package dev.arrayd.benchmarks.jmh;

import dev.arrayd.scheduler.Event;
import dev.arrayd.scheduler.EventListener;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Event signalling and waiting: a fresh event with listeners, signalled; and the future view a waiter
 * blocks on, signalled and joined.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class EventBench {

    private long id;

    /** The common case: one listener (the dependent command or the stream handler). */
    @Benchmark
    public void signalOneListener(Blackhole bh) {
        Event e = new Event(++id);
        e.onDone(bh::consume);
        e.succeed(1, null);
    }

    /** Three listeners: a dependent, the stream handler, a waiter. */
    @Benchmark
    public void signalThreeListeners(Blackhole bh) {
        Event e = new Event(++id);
        EventListener l = bh::consume;
        e.onDone(l);
        e.onDone(l);
        e.onDone(l);
        e.succeed(1, null);
    }

    /** A waiter's view: the event as a future, signalled, then joined. */
    @Benchmark
    public Event signalAndJoinFuture() {
        Event e = new Event(++id);
        var f = e.toFuture();
        e.succeed(1, null);
        return f.join();
    }
}
