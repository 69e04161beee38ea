package dev.arrayd.scheduler;

import dev.arrayd.devices.api.support.GuardedBy;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drops queued commands whose deadline passed. No periodic tick: an idle daemon wakes for nothing. A
 * device queue that gets an earlier deadline arms the timer for it ({@link DeviceQueue#onEarlierDeadline});
 * each run ({@code arrayd-deadlines}) drops what expired and re-arms for the earliest deadline left.
 * Commands still waiting for dependencies are checked when they become ready, and every command once more
 * when it is dispatched, so the timer only has to catch those that wait in a queue.
 */
final class DeadlineTimer {

    /** Shortest wait of the timer: a deadline is met within this much (and the dispatcher checks exactly). */
    static final long MIN_DELAY_NANOS = 100_000;

    private static final Logger log = LoggerFactory.getLogger(DeadlineTimer.class);

    private final SchedulerContext ctx;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "arrayd-deadlines");
        t.setDaemon(true);
        return t;
    });
    /** Held by a run of {@link #expire}. */
    private final Object expiring = new Object();
    /** The deadline the timer is armed for (NO_DEADLINE: not armed). */
    @GuardedBy("this")
    private long armedFor = CommandSpec.NO_DEADLINE;

    DeadlineTimer(SchedulerContext ctx) {
        this.ctx = ctx;
        for (DeviceRuntime d : ctx.devices()) {
            watch(d);
        }
    }

    /** Arms the timer for the deadlines queued on {@code d} (also a device added after the start). */
    void watch(DeviceRuntime d) {
        d.queue().onEarlierDeadline(this::arm);
    }

    /** Makes sure the timer runs at {@code deadlineNanos} (scheduler clock) or earlier. */
    synchronized void arm(long deadlineNanos) {
        if (deadlineNanos >= armedFor) {
            return;
        }
        armedFor = deadlineNanos;
        // at least MIN_DELAY: a clock that does not move with time (tests) must not spin the timer
        long delay = Math.max(MIN_DELAY_NANOS, deadlineNanos - ctx.now());
        try {
            timer.schedule(this::reached, delay, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closing) {
            armedFor = CommandSpec.NO_DEADLINE; // shut down: commands are checked when dispatched
        }
    }

    /** The timer: drops what expired, then re-arms for the earliest deadline still queued. */
    private void reached() {
        synchronized (this) {
            armedFor = CommandSpec.NO_DEADLINE;
        }
        try {
            expire();
        } catch (RuntimeException e) {
            log.error("deadline check failed", e);
        }
        long next = CommandSpec.NO_DEADLINE;
        for (DeviceRuntime d : ctx.devices()) {
            next = Math.min(next, d.queue().earliestDeadline());
        }
        if (next != CommandSpec.NO_DEADLINE) {
            arm(next);
        }
    }

    /**
     * Fails, with DEADLINE_EXCEEDED, every queued command whose deadline has passed on the scheduler's
     * clock, and so everything that waits on them; returns how many were dropped. One run at a time: a
     * call made while the timer's run is under way waits for it, so that when it returns every command
     * expired by then has failed and what that made ready has been dispatched (not only taken out of its
     * queue by the other run).
     */
    int expire() {
        synchronized (expiring) {
            long now = ctx.now();
            int n = 0;
            for (DeviceRuntime d : ctx.devices()) {
                for (Command c : d.queue().expire(now)) {
                    c.deadlinePassed();
                    n++;
                }
            }
            return n;
        }
    }

    void close() {
        timer.shutdownNow();
    }
}
