package dev.arrayd.scheduler;

import dev.arrayd.devices.api.NativeStream;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The fair queue in front of one device: where ready commands wait for the device, and the
 * dispatcher that hands them to its native streams.
 *
 * <pre>
 *  ready commands (all dependencies done)
 *        │
 *        ▼                      ┌─ HIGH   ─ flows: [s1]            served strictly first
 *  queue empty and fewer than   ├─ NORMAL ─ flows: [s1] [s2] [s3]  least virtual time first
 *  `depth` handed out? ─no──▶   └─ LOW    ─ flows: [s4]            (one dispatch in 17 when starved)
 *        │ yes                              │ a completion frees a slot; the dispatcher picks
 *        ▼                                  ▼
 *  run now: fast path inline, or the session's dedicated native stream / the least loaded shared one
 *        │
 *        ▼
 *  device ─ completion ─▶ frees the slot, charges the flow the measured device time, dispatches more
 * </pre>
 *
 * <p><b>Start-time fair queueing on measured device time.</b> A flow is one session's ready commands
 * in one priority class. Each flow has a virtual time: the device nanoseconds its commands used,
 * divided by the session's weight. The dispatcher serves the backlogged flow with the least virtual
 * time. A command is charged an estimate when dispatched (its kernel's recent cost, else the device's
 * running average) and corrected by its measured device time when it completes, so expensive kernels
 * cost what they cost and no quantum needs tuning. A flow that gets work after being idle (nothing
 * queued and nothing on the device) is lifted to the class's virtual clock (the start virtual time of
 * the last command served): idleness banks no credit, and a newcomer is served next rather than after
 * everybody's backlog. A flow whose commands are all on the device is busy, not idle: it keeps its
 * place (a session with few streams is between commands most of the time).
 *
 * <p><b>Bounded hand-off.</b> At most {@code depth} commands of this device are running or waiting in
 * its native streams; the rest wait here, where the weights decide. The last free slot is reserved for
 * a session with nothing on the device that has not had more than its share (virtual time not ahead
 * of the class's clock), so one session holds at most {@code depth - 1}: a polite session's command
 * starts at once beside a flood instead of after one of its commands. Commands of a session's default
 * stream go to the least loaded shared native stream when dispatched (their order is kept by their
 * dependency edges, so any lane will do); a dedicated stream's go to its own native stream.
 *
 * <p><b>Priorities.</b> Classes are served strictly in order. Starvation protection: after
 * {@link #STARVATION_LIMIT} dispatches in a row went to a higher class while a lower one waited, the
 * next goes to the waiting lower class served longest ago; so every class gets at least one dispatch in
 * {@code (STARVATION_LIMIT + 1) * classes}.
 *
 * <p><b>Never deadlocks.</b> Only ready commands are queued, and a command handed to the device
 * finishes without waiting for anything queued here, so a slot always frees.
 *
 * <p><b>Fast path.</b> With nothing queued and a free slot, a ready command is dispatched at once on
 * the thread that made it ready (one uncontended lock), and a short one runs inline as before.
 */
final class DeviceQueue {

    /** Dispatches in a row to a higher class before a waiting lower class gets one. */
    static final int STARVATION_LIMIT = 16;

    /** The running average's starting value, before any command has completed. */
    private static final double INITIAL_COST_NANOS = 10_000;

    private static final int CLASSES = Priority.values().length;

    private final int depth;
    private final LongSupplier clock;
    private final NativeStream[] shared;

    // everything below is guarded by `this`
    private final int[] sharedLoad;
    private final Map<Session, Flow[]> flows = new IdentityHashMap<>();
    @SuppressWarnings("unchecked")
    private final List<Flow>[] backlogged = new List[CLASSES];
    private final double[] vclock = new double[CLASSES];
    private final long[] lastServed = new long[CLASSES];
    private long dispatches;
    private int streak;
    private int inflight;
    private int queued;
    private double avgCost = INITIAL_COST_NANOS;
    private long earliestDeadline = CommandSpec.NO_DEADLINE;

    DeviceQueue(List<NativeStream> shared, int depth, LongSupplier clock) {
        this.shared = shared.toArray(NativeStream[]::new);
        this.sharedLoad = new int[this.shared.length];
        this.depth = depth;
        this.clock = clock;
        for (int i = 0; i < CLASSES; i++) {
            backlogged[i] = new ArrayList<>();
        }
    }

    int depth() {
        return depth;
    }

    LongSupplier clock() {
        return clock;
    }

    /** Commands waiting here for a slot. */
    synchronized int queued() {
        return queued;
    }

    /** Commands handed to the device and not finished. */
    synchronized int inflight() {
        return inflight;
    }

    /**
     * A command whose dependencies are done: dispatched at once if nothing waits and a slot is free
     * (then {@link Command#launch()} runs on this thread), else queued in its flow.
     */
    void ready(Command c) {
        boolean now;
        Drained more = null;
        synchronized (this) {
            Flow f = flowOf(c);
            if (!f.backlogged && f.inflight == 0) {
                // idle until now (nothing queued, nothing on the device): no credit for the idle time
                f.vtime = Math.max(f.vtime, vclock[f.cls]);
            }
            now = queued == 0 && inflight < depth && mayTake(f);
            if (now) {
                admit(c, f);
            } else {
                enqueue(c, f);
                if (inflight < depth) {
                    // the free slot is the reserved one and this flow may take it
                    more = drain();
                }
            }
        }
        if (now) {
            c.launch();
        } else {
            if (more != null) {
                more.run();
            }
            c.queuedNow();
        }
    }

    /** Commands the dispatcher took out of the queue under the lock, to launch or fail outside it. */
    private record Drained(List<Command> launch, List<Command> expired) {
        void run() {
            if (expired != null) {
                expired.forEach(Command::deadlinePassed);
            }
            if (launch != null) {
                launch.forEach(Command::launch);
            }
        }
    }

    /**
     * The last free slot is kept for a flow with nothing on the device: a session that floods the device
     * holds at most {@code depth - 1} slots, so a newcomer's command starts at once instead of behind a
     * flood command. With a depth of 1 there is nothing to reserve.
     */
    private boolean mayTake(Flow f) {
        return depth == 1 || inflight < depth - 1 || mayTakeLast(f);
    }

    /**
     * Whether a flow may have the reserved slot: nothing of it on the device, and not ahead of its class's
     * virtual clock (a light-weight session that has had its share does not get a slot beyond it).
     */
    private boolean mayTakeLast(Flow f) {
        return f.inflight == 0 && f.vtime <= vclock[f.cls];
    }

    /**
     * A dispatched command finished after {@code deviceNanos} on the device: frees its slot, corrects
     * its flow's charge, and dispatches what now fits. Commands found expired are failed.
     */
    void done(Command c, long deviceNanos) {
        Drained more = null;
        synchronized (this) {
            inflight--;
            c.flow.inflight--;
            if (c.laneIndex >= 0) {
                sharedLoad[c.laneIndex]--;
            }
            if (deviceNanos > 0) {
                c.flow.charge(deviceNanos - c.charged);
                avgCost += (deviceNanos - avgCost) / 16;
            }
            if (queued > 0) {
                more = drain();
            }
        }
        if (more != null) {
            more.run();
        }
    }

    /** Dispatches queued commands while slots are free; under the lock. */
    private Drained drain() {
        List<Command> launch = null;
        List<Command> expired = null;
        long now = earliestDeadline == CommandSpec.NO_DEADLINE ? 0 : clock.getAsLong();
        while (inflight < depth && queued > 0) {
            Command next = pick(!(depth == 1 || inflight < depth - 1));
            if (next == null) {
                break;
            }
            if (next.deadlineNanos != CommandSpec.NO_DEADLINE && now >= next.deadlineNanos) {
                (expired == null ? expired = new ArrayList<>(2) : expired).add(next);
                continue;
            }
            admit(next, next.flow);
            (launch == null ? launch = new ArrayList<>(2) : launch).add(next);
        }
        return launch == null && expired == null ? null : new Drained(launch, expired);
    }

    /** Takes a queued command out (it was cancelled); false if it is not queued here any more. */
    synchronized boolean remove(Command c) {
        Flow f = c.flow;
        if (f == null || !f.queue.remove(c)) {
            return false;
        }
        queued--;
        if (f.queue.isEmpty()) {
            unbacklog(f);
        }
        return true;
    }

    /** Removes and returns the queued commands whose deadline is at or before {@code now}. */
    List<Command> expire(long now) {
        synchronized (this) {
            if (now < earliestDeadline || queued == 0) {
                return List.of();
            }
            List<Command> out = new ArrayList<>();
            long earliest = CommandSpec.NO_DEADLINE;
            for (List<Flow> cls : backlogged) {
                for (int i = cls.size() - 1; i >= 0; i--) {
                    Flow f = cls.get(i);
                    for (var it = f.queue.iterator(); it.hasNext(); ) {
                        Command c = it.next();
                        if (now >= c.deadlineNanos) {
                            it.remove();
                            queued--;
                            out.add(c);
                        } else {
                            earliest = Math.min(earliest, c.deadlineNanos);
                        }
                    }
                    if (f.queue.isEmpty()) {
                        unbacklog(f);
                    }
                }
            }
            earliestDeadline = earliest;
            return out;
        }
    }

    /** Forgets a closed session's flows (their virtual time); commands already queued still run. */
    synchronized void forget(Session s) {
        flows.remove(s);
    }

    // ------------------------------------------------------------------ under the lock

    private Flow flowOf(Command c) {
        int cls = c.priority.ordinal();
        Stream st = c.stream;
        Flow f = st.flows[cls];
        if (f == null) {
            Flow[] byClass = flows.get(c.session);
            if (byClass == null) {
                byClass = new Flow[CLASSES];
                flows.put(c.session, byClass);
                Session s = c.session;
                s.onClose(() -> forget(s));
            }
            f = byClass[cls];
            if (f == null) {
                f = byClass[cls] = new Flow(c.session, cls);
                f.vtime = vclock[cls];
            }
            st.flows[cls] = f;
        }
        return f;
    }

    private void admit(Command c, Flow f) {
        inflight++;
        f.inflight++;
        c.flow = f;
        // The device's running average, not the kernel's KernelCost: that one is a decaying maximum (right
        // for the fast path's "surely short?") and would overcharge commands in flight many times over.
        c.charged = avgCost;
        vclock[f.cls] = Math.max(vclock[f.cls], f.vtime);
        f.charge(c.charged);
        if (c.stream.ownsNative() || shared.length == 0) {
            c.lane = c.stream.nativeStream();
            c.laneIndex = -1;
        } else {
            int best = 0;
            for (int i = 1; i < sharedLoad.length; i++) {
                if (sharedLoad[i] < sharedLoad[best]) {
                    best = i;
                }
            }
            sharedLoad[best]++;
            c.lane = shared[best];
            c.laneIndex = best;
        }
        c.state = Command.RUNNING;
    }

    private void enqueue(Command c, Flow f) {
        c.flow = f;
        if (!f.backlogged) {
            f.backlogged = true;
            backlogged[f.cls].add(f);
        }
        f.queue.add(c);
        queued++;
        if (c.deadlineNanos < earliestDeadline) {
            earliestDeadline = c.deadlineNanos;
        }
        c.state = Command.QUEUED;
    }

    private void unbacklog(Flow f) {
        if (f.backlogged) {
            f.backlogged = false;
            backlogged[f.cls].remove(f);
        }
    }

    /**
     * The next command to serve, or null if none may have the slot: with {@code lastSlot}, only flows with
     * nothing on the device are eligible (see {@link #mayTake}).
     */
    private Command pick(boolean lastSlot) {
        int top = 0;
        while (top < CLASSES && !hasEligible(top, lastSlot)) {
            top++;
        }
        if (top == CLASSES) {
            return null;
        }
        int cls = top;
        int starved = -1;
        for (int i = top + 1; i < CLASSES; i++) {
            if (hasEligible(i, lastSlot) && (starved < 0 || lastServed[i] < lastServed[starved])) {
                starved = i;
            }
        }
        if (starved < 0) {
            streak = 0;
        } else if (streak >= STARVATION_LIMIT) {
            cls = starved;
            streak = 0;
        } else {
            streak++;
        }
        lastServed[cls] = ++dispatches;
        Flow best = null;
        for (Flow f : backlogged[cls]) {
            if ((!lastSlot || mayTakeLast(f)) && (best == null || f.vtime < best.vtime)) {
                best = f;
            }
        }
        Command c = best.queue.poll();
        queued--;
        if (best.queue.isEmpty()) {
            unbacklog(best);
        }
        return c;
    }

    private boolean hasEligible(int cls, boolean lastSlot) {
        if (!lastSlot) {
            return !backlogged[cls].isEmpty();
        }
        for (Flow f : backlogged[cls]) {
            if (mayTakeLast(f)) {
                return true;
            }
        }
        return false;
    }
}
