package dev.arrayd.scheduler;

import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.support.GuardedBy;
import java.util.ArrayList;
import java.util.HashMap;
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
 *        ▼                      ┌─ HIGH   ─ shares: a:[s1]                 served strictly first
 *  queue empty and fewer than   ├─ NORMAL ─ shares: a:[s1 s2]  b:[s3]      least virtual time first: the
 *  `depth` handed out? ─no──▶   │                                         tenant, then its session
 *        │ yes                  └─ LOW    ─ shares: c:[s4]                 (one dispatch in 17 when starved)
 *        │                                  │ a completion frees a slot; the dispatcher picks
 *        ▼                                  ▼
 *  run now: fast path inline, or the session's dedicated native stream / the least loaded shared one
 *        │
 *        ▼
 *  device ─ completion ─▶ frees the slot, charges flow and share the measured device time, dispatches more
 * </pre>
 *
 * <p><b>Start-time fair queueing on measured device time, in two levels.</b> A flow is one session's
 * ready commands in one priority class; a share is one tenant's flows in that class. Each share has a
 * virtual time: the device nanoseconds its commands used, divided by the tenant's weight; each flow has
 * one too, in plain device nanoseconds. The dispatcher serves the backlogged share with the least
 * virtual time, and within it the backlogged flow with the least: tenants share the device by weight,
 * and the sessions of one tenant share their tenant's part equally (a tenant does not get more by
 * opening more sessions). A command is charged an estimate when dispatched (the device's running
 * average) and corrected by its measured device time when it completes, so expensive kernels cost
 * what they cost and no quantum needs tuning. A share that gets work after being idle (nothing queued
 * and nothing on the device) is lifted to the class's virtual clock (the start virtual time of the
 * last share served), and an idle flow to its share's clock likewise: idleness banks no credit, and a
 * newcomer is served next rather than after everybody's backlog. A flow whose commands are all on the
 * device is busy, not idle: it keeps its place (a session with few streams is between commands most
 * of the time).
 *
 * <p><b>Bounded hand-off.</b> At most {@code depth} commands of this device are running or waiting in
 * its native streams; the rest wait here, where the weights decide. The last free slot is reserved for
 * a session with nothing on the device that has not had more than its share, at both levels (its
 * virtual time not ahead of its clock, or not ahead of any active competitor's: a tenant alone on the
 * device has had no more than its share), so one session holds at most {@code depth - 1}: a polite
 * session's command starts at once beside a flood instead of after one of its commands. Commands of a
 * session's default stream go to the least loaded shared native stream when dispatched (their order is
 * kept by their dependency edges, so any lane will do); a dedicated stream's go to its own native
 * stream.
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
    /** The scheduler's clock unless a test gives another: System.nanoTime. */
    static final LongSupplier SYSTEM_CLOCK = System::nanoTime;

    private final int depth;
    private final LongSupplier clock;
    // whether the clock is System.nanoTime: a caller's reading of it then serves (a reading costs tens of ns on VMs)
    private final boolean systemClock;
    private final NativeStream[] shared;

    @GuardedBy("this")
    private final int[] sharedLoad;
    @GuardedBy("this")
    private final Map<Session, Flow[]> flows = new IdentityHashMap<>();
    @GuardedBy("this")
    private final Map<String, Flow.Share[]> shares = new HashMap<>();
    /** Per class: the shares with backlogged flows. */
    @SuppressWarnings("unchecked")
    @GuardedBy("this")
    private final List<Flow.Share>[] backlogged = new List[CLASSES];
    /** Per class: the shares with flows queued or on the device. */
    @SuppressWarnings("unchecked")
    @GuardedBy("this")
    private final List<Flow.Share>[] activeShares = new List[CLASSES];
    @GuardedBy("this")
    private final double[] vclock = new double[CLASSES];
    @GuardedBy("this")
    private final long[] lastServed = new long[CLASSES];
    @GuardedBy("this")
    private long dispatches;
    @GuardedBy("this")
    private int streak;
    @GuardedBy("this")
    private int inflight;
    @GuardedBy("this")
    private int queued;
    // busy time: while at least one command is handed to the device (running or in its native streams)
    @GuardedBy("this")
    private long busyNanos;
    // when the device went busy; INLINE while its only command is a short one run inline, whose busy time is its
    // device time (no clock reading for it: two tens-of-ns readings would be a good part of such a command's cost)
    @GuardedBy("this")
    private long busySince;
    private static final long INLINE = Long.MIN_VALUE;
    @GuardedBy("this")
    private double avgCost = INITIAL_COST_NANOS;
    @GuardedBy("this")
    private long earliestDeadline = CommandSpec.NO_DEADLINE;
    // told when a queued command brings the earliest deadline forward (the scheduler arms its timer)
    private volatile java.util.function.LongConsumer earlierDeadline = d -> { };

    DeviceQueue(List<NativeStream> shared, int depth, LongSupplier clock) {
        this.shared = shared.toArray(NativeStream[]::new);
        this.sharedLoad = new int[this.shared.length];
        this.depth = depth;
        this.clock = clock;
        this.systemClock = clock == SYSTEM_CLOCK;
        for (int i = 0; i < CLASSES; i++) {
            backlogged[i] = new ArrayList<>();
            activeShares[i] = new ArrayList<>();
        }
    }

    int depth() {
        return depth;
    }

    /** Time during which at least one command was handed to this device and not finished, so far. */
    synchronized long busyNanos() {
        return inflight > 0 && busySince != INLINE ? busyNanos + (clock.getAsLong() - busySince) : busyNanos;
    }

    LongSupplier clock() {
        return clock;
    }

    /** Who to tell when a queued command's deadline is earlier than every other queued one's. */
    void onEarlierDeadline(java.util.function.LongConsumer listener) {
        this.earlierDeadline = listener;
    }

    /** The earliest deadline among the queued commands (an upper bound: expired or dispatched ones may linger). */
    synchronized long earliestDeadline() {
        return queued == 0 ? CommandSpec.NO_DEADLINE : earliestDeadline;
    }

    /** Commands waiting here for a slot. */
    synchronized int queued() {
        return queued;
    }

    /** Running average of the device time of the commands completed here (10 µs before the first). */
    synchronized double averageCostNanos() {
        return avgCost;
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
            if (!f.active) {
                // idle until now (nothing queued, nothing on the device): no credit for the idle time
                Flow.Share g = f.share;
                if (!g.active()) {
                    g.vtime = Math.max(g.vtime, vclock[g.cls]);
                    activeShares[g.cls].add(g);
                }
                f.vtime = Math.max(f.vtime, g.clock);
                f.active = true;
                g.activeFlows.add(f);
            }
            now = queued == 0 && inflight < depth && mayTake(f);
            if (now) {
                admit(c, f);
            } else {
                c.waiting();
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
        return depth == 1 || inflight < depth - 1 || mayTakeLast(f, minActiveVtime(f.share.cls));
    }

    /**
     * Whether a flow may have the reserved slot: nothing of it on the device, its session not ahead
     * within its tenant, and its tenant not ahead in its class ({@code minShares}: the least virtual time
     * of the class's active shares). A light-weight session or tenant that has had its share does not get
     * a slot beyond it.
     */
    private boolean mayTakeLast(Flow f, double minShares) {
        Flow.Share g = f.share;
        return f.inflight == 0 && notAhead(g.vtime, vclock[g.cls], minShares)
                && notAhead(f.vtime, g.clock, minActiveVtime(g));
    }

    /**
     * Not ahead of its share: at or behind the clock of its level (the start of the last one served
     * there), or at or behind every active competitor (alone on the device, nobody's share is taken).
     */
    private static boolean notAhead(double vtime, double levelClock, double leastActive) {
        return vtime <= levelClock || vtime <= leastActive;
    }

    private double minActiveVtime(int cls) {
        double min = Double.POSITIVE_INFINITY;
        for (Flow.Share g : activeShares[cls]) {
            min = Math.min(min, g.vtime);
        }
        return min;
    }

    private static double minActiveVtime(Flow.Share g) {
        double min = Double.POSITIVE_INFINITY;
        for (Flow f : g.activeFlows) {
            min = Math.min(min, f.vtime);
        }
        return min;
    }

    /**
     * A dispatched command finished after {@code deviceNanos} on the device: frees its slot, corrects
     * its flow's charge, and dispatches what now fits. Commands found expired are failed. Returns
     * System.nanoTime when it read it, or — unless {@code wantNow} — 0 when it did not need to.
     */
    long done(Command c, long deviceNanos, boolean wantNow) {
        long now = wantNow ? System.nanoTime() : 0;
        Drained more = null;
        synchronized (this) {
            Flow f = c.flow;
            if (--inflight == 0) {
                if (busySince == INLINE) {
                    busyNanos += deviceNanos;
                } else if (systemClock) {
                    if (now == 0) {
                        now = System.nanoTime();
                    }
                    busyNanos += now - busySince;
                } else {
                    busyNanos += clock.getAsLong() - busySince;
                }
            }
            f.inflight--;
            if (c.laneIndex >= 0) {
                sharedLoad[c.laneIndex]--;
            }
            if (deviceNanos > 0) {
                f.charge(deviceNanos - c.charged);
                avgCost += (deviceNanos - avgCost) / 16;
            }
            idleIfDone(f);
            if (queued > 0) {
                more = drain();
            }
        }
        if (more != null) {
            more.run();
        }
        return now;
    }

    /** The command dispatched to run inline went to its lane instead: busy time from now by the clock. */
    synchronized void notInline() {
        if (busySince == INLINE) {
            busySince = clock.getAsLong();
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
                idleIfDone(next.flow);
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
            idleIfDone(f);
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
            for (List<Flow.Share> cls : backlogged) {
                for (int i = cls.size() - 1; i >= 0; i--) {
                    Flow.Share g = cls.get(i);
                    for (int j = g.backlogged.size() - 1; j >= 0; j--) {
                        Flow f = g.backlogged.get(j);
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
                            idleIfDone(f);
                        }
                    }
                }
            }
            earliestDeadline = earliest;
            return out;
        }
    }

    /**
     * Forgets a closed session's flows (their virtual time). Commands of it already queued here are
     * still served (the server cancels them when it closes a session).
     */
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
                f = byClass[cls] = new Flow(c.session, cls, shareOf(c.session.tenant(), cls));
            }
            st.flows[cls] = f;
        } else if (!f.active && !f.share.tenant.equals(c.session.tenant())) {
            // the session now works for another tenant: it charges that one from its next command on
            f.share = shareOf(c.session.tenant(), cls);
        }
        return f;
    }

    private Flow.Share shareOf(String tenant, int cls) {
        Flow.Share[] byClass = shares.computeIfAbsent(tenant, t -> new Flow.Share[CLASSES]);
        Flow.Share g = byClass[cls];
        if (g == null) {
            g = byClass[cls] = new Flow.Share(tenant, cls);
            g.vtime = vclock[cls];
        }
        return g;
    }

    private void admit(Command c, Flow f) {
        Flow.Share g = f.share;
        if (inflight++ == 0) {
            busySince = systemClock && c.runsInline() ? INLINE : clock.getAsLong();
        } else if (busySince == INLINE) {
            busySince = clock.getAsLong(); // a second command: the clock's interval from here on
        }
        f.inflight++;
        c.flow = f;
        // The device's running average, not the kernel's KernelCost: that one is a decaying maximum (right
        // for the fast path's "surely short?") and would overcharge commands in flight many times over.
        c.charged = (float) avgCost;
        vclock[f.cls] = Math.max(vclock[f.cls], g.vtime);
        g.clock = Math.max(g.clock, f.vtime);
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
        c.stage = Command.RUNNING;
    }

    private void enqueue(Command c, Flow f) {
        c.flow = f;
        if (!f.backlogged) {
            f.backlogged = true;
            Flow.Share g = f.share;
            g.backlogged.add(f);
            if (!g.listed) {
                g.listed = true;
                backlogged[g.cls].add(g);
            }
        }
        f.queue.add(c);
        queued++;
        if (c.deadlineNanos < earliestDeadline) {
            earliestDeadline = c.deadlineNanos;
            earlierDeadline.accept(c.deadlineNanos); // lock order: this queue, then the scheduler's timer
        }
        c.stage = Command.QUEUED;
    }

    private void unbacklog(Flow f) {
        if (f.backlogged) {
            f.backlogged = false;
            Flow.Share g = f.share;
            g.backlogged.remove(f);
            if (g.listed && g.backlogged.isEmpty()) {
                g.listed = false;
                backlogged[g.cls].remove(g);
            }
        }
    }

    /** A flow with nothing queued and nothing on the device is idle: no longer a competitor. */
    private void idleIfDone(Flow f) {
        if (f.active && !f.backlogged && f.inflight == 0) {
            f.active = false;
            Flow.Share g = f.share;
            g.activeFlows.remove(f);
            if (!g.active()) {
                activeShares[g.cls].remove(g);
            }
        }
    }

    /**
     * The next command to serve, or null if none may have the slot: with {@code lastSlot}, only flows with
     * nothing on the device are eligible (see {@link #mayTake}).
     */
    private Command pick(boolean lastSlot) {
        int top = 0;
        Flow chosen = null;
        while (top < CLASSES && (chosen = choose(top, lastSlot)) == null) {
            top++;
        }
        if (chosen == null) {
            return null;
        }
        int cls = top;
        int starved = -1;
        Flow starvedFlow = null;
        for (int i = top + 1; i < CLASSES; i++) {
            if (starved >= 0 && lastServed[i] >= lastServed[starved]) {
                continue;
            }
            Flow candidate = choose(i, lastSlot);
            if (candidate != null) {
                starved = i;
                starvedFlow = candidate;
            }
        }
        if (starved < 0) {
            streak = 0;
        } else if (streak >= STARVATION_LIMIT) {
            cls = starved;
            chosen = starvedFlow;
            streak = 0;
        } else {
            streak++;
        }
        lastServed[cls] = ++dispatches;
        Command c = chosen.queue.poll();
        queued--;
        if (chosen.queue.isEmpty()) {
            unbacklog(chosen);
        }
        return c;
    }

    /**
     * The flow to serve next in class {@code cls}: of the backlogged share with the least virtual time, its
     * backlogged flow with the least; with {@code lastSlot}, among those that may have the reserved slot.
     * Null if there is none.
     */
    private Flow choose(int cls, boolean lastSlot) {
        List<Flow.Share> waiting = backlogged[cls];
        if (waiting.isEmpty()) {
            return null;
        }
        if (!lastSlot) {
            Flow.Share best = waiting.getFirst();
            for (Flow.Share g : waiting) {
                if (g.vtime < best.vtime) {
                    best = g;
                }
            }
            Flow bf = best.backlogged.getFirst();
            for (Flow f : best.backlogged) {
                if (f.vtime < bf.vtime) {
                    bf = f;
                }
            }
            return bf;
        }
        double minShares = minActiveVtime(cls);
        Flow.Share best = null;
        Flow bf = null;
        for (Flow.Share g : waiting) {
            if (best != null && g.vtime >= best.vtime) {
                continue;
            }
            Flow candidate = null;
            for (Flow f : g.backlogged) {
                if ((candidate == null || f.vtime < candidate.vtime) && mayTakeLast(f, minShares)) {
                    candidate = f;
                }
            }
            if (candidate != null) {
                best = g;
                bf = candidate;
            }
        }
        return bf;
    }
}
