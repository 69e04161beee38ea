package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.StreamMarker;
import dev.arrayd.devices.api.support.GuardedBy;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One submitted command on its way to a device. It counts its unfinished dependencies (starting
 * at one, the submitter's own hold, so it cannot start before submission is over); the last one
 * to finish hands it to its device's {@link DeviceQueue}, or fails it if a data dependency failed,
 * it was cancelled or its deadline passed.
 *
 * <p>Data dependencies (explicit waits, read-after-write and a part write's wait for the data it keeps, unless the
 * session's dependencies only order) pass failure on; ordering-only ones
 * (write-after-read, write-after-write, stream order) only delay.
 *
 * <p><b>Native waits.</b> A dependency whose command is already on a native stream of the same backend
 * (submitted to its lane, not finished) is not counted: the command takes a {@link StreamMarker} at the
 * end of that lane and, once its other dependencies are done, is dispatched at once with
 * {@link NativeStream#submitAfter} — the device (or the CPU stream's worker) waits, not the host. Its
 * event still settles only after every such dependency's event has: a data dependency that failed makes
 * it fail with that cause even though it ran (the buffers it wrote then hold what a failed input gave,
 * and every reader of them fails the same way).
 *
 * <p>A command is its own {@link Event}. Settled events stay referenced for a while (stream tails, replicas'
 * users, the session's table), so a command drops what it no longer needs when it settles: its device op
 * (an upload's data), its kernel and its trace.
 */
final class Command extends Event implements EventListener, CommandCallback, Runnable {

    // Where the command is. WAITING -> (QUEUED ->) RUNNING -> DONE; the device queue moves it to QUEUED
    // and RUNNING under its lock, end() to DONE. Only a RUNNING command holds a dispatch slot.
    static final int WAITING = 0;
    static final int QUEUED = 1;
    static final int RUNNING = 2;
    static final int DONE = 3;

    // Trampolined ends (see run()): none requested, one being written (endCause / endNanos), one ready.
    private static final int END_NONE = 0;
    private static final int END_CLAIMED = 1;
    private static final int END_READY = 2;

    private static final VarHandle STAGE;
    private static final VarHandle CANCEL;
    private static final VarHandle UNFINISHED;
    private static final VarHandle DEP_FAILURE;
    private static final VarHandle END;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STAGE = l.findVarHandle(Command.class, "stage", int.class);
            CANCEL = l.findVarHandle(Command.class, "cancelCause", ArraydException.class);
            UNFINISHED = l.findVarHandle(Command.class, "unfinished", int.class);
            DEP_FAILURE = l.findVarHandle(Command.class, "depFailure", ArraydException.class);
            END = l.findVarHandle(Command.class, "endState", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // what the device runs; null for a marker, and once settled
    private DeviceCommand op;
    // A launch's kernel: its module is retained while the command is pending, and the run time is recorded in its
    // cost and its history on the command's device. One reference instead of three (module, cost, history): the
    // command is allocated for every submission, and it is most of what a submission allocates. Null once settled.
    private CompiledKernel kernel;
    // when it may run inline, on the thread that makes it ready (INLINE_*)
    private final byte inline;
    private final long items;
    // For the observer's wait time: when the command began to wait, or 0 while it has not — a command that
    // runs at once on the submitting thread waits for nothing, and is spared the clock reading (see waiting())
    private long waitingSince;
    private Object submission;         // what the session's observer keeps from the submitting call (a trace); null once settled
    final Stream stream;
    final Session session;
    final Priority priority;
    final long deadlineNanos;
    // dependencies not finished yet, plus the submitter's hold (UNFINISHED); fields, not atomics, to keep commands small
    private volatile int unfinished; // 1 from the constructor
    private volatile ArraydException cancelCause;
    private volatile ArraydException depFailure;
    // placement: what a launch was expected to cost its device (a float: the same rounding when added and taken off)
    float expectedNanos;
    volatile int stage; // WAITING (0) from the start
    // set by the device queue under its lock when queued or dispatched
    @GuardedBy("DeviceQueue.this")
    Flow flow;
    @GuardedBy("DeviceQueue.this")
    float charged;
    @GuardedBy("DeviceQueue.this")
    NativeStream lane;
    @GuardedBy("DeviceQueue.this")
    int laneIndex = -1;
    // listener for ordering-only dependencies, made when the first one is still pending (most are done already)
    private EventListener orderOnly;
    // Trampolined work without a lambda per command: run() launches the op inline until an end is
    // requested, then ends the command with the first requested outcome (later requests lose, as
    // they would in end(), which settles exactly once). The end's device time goes to the event's own field.
    private volatile int endState; // END_NONE (0) from the start
    private ArraydException endCause;
    // Native waits (see the class comment), made when it takes its first marker: most commands have none,
    // and a command is allocated for every submission, so they live in a side object
    private NativeWaits nativeWaits;
    // set once its op was handed to its lane (not run inline): a later command may take a marker there
    volatile boolean onLane;

    /**
     * The markers of the lanes a command waits for natively (one per lane, taken before release()), and
     * the count of those dependencies whose events have not settled, plus one for the command's own end:
     * whichever brings it to zero settles the command's event.
     */
    private static final class NativeWaits {
        private static final VarHandle PENDING;

        static {
            try {
                PENDING = MethodHandles.lookup().findVarHandle(NativeWaits.class, "pending", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        StreamMarker[] markers = new StreamMarker[2];
        NativeStream[] lanes = new NativeStream[2];
        int count;
        volatile int pending = 1;
        EventListener data;
        EventListener order;

        /** The marker already taken on {@code lane}, or null. */
        StreamMarker on(NativeStream lane) {
            for (int i = 0; i < count; i++) {
                if (lanes[i] == lane) {
                    return markers[i];
                }
            }
            return null;
        }

        void add(NativeStream lane, StreamMarker m) {
            if (count == markers.length) {
                markers = java.util.Arrays.copyOf(markers, count * 2);
                lanes = java.util.Arrays.copyOf(lanes, count * 2);
            }
            markers[count] = m;
            lanes[count++] = lane;
        }

        StreamMarker[] markers() {
            return count == markers.length ? markers : java.util.Arrays.copyOf(markers, count);
        }

        /** True for whoever takes the count to zero. */
        boolean settledOne() {
            return (int) PENDING.getAndAdd(this, -1) == 1;
        }

        void waitForOneMore() {
            PENDING.getAndAdd(this, 1);
        }
    }

    /**
     * @param id            its event's id (0 for an internal command's)
     * @param result        what its event carries if it succeeds (a download's destination), or null
     * @param kernel        a launch's kernel, its module already retained for this command (released when it
     *                      ends); null for other commands
     * @param inline        when to run it on the thread that makes it ready: {@link #INLINE_SHORT} (expected to be
     *                      short), {@link #INLINE_FROM_COMPLETION} (short enough for a thread completing a command),
     *                      or {@link #INLINE_NEVER}
     * @param items         work-items of a launch, bytes of a transfer
     * @param priority      its class in the device queue
     * @param deadlineNanos on the scheduler's clock; {@link CommandSpec#NO_DEADLINE} for none
     */
    Command(long id, Session session, Stream stream, DeviceCommand op, Object result, CompiledKernel kernel,
            byte inline, long items, Priority priority, long deadlineNanos) {
        super(id, result);
        this.priority = priority;
        this.deadlineNanos = deadlineNanos;
        this.session = session;
        this.stream = stream;
        this.op = op;
        this.kernel = kernel;
        this.inline = inline;
        this.items = items;
        // A plain write: the command reaches other threads only through locks and atomics (the session's table,
        // its dependencies' listeners, the device queue), each publishing it; a volatile one would cost a fence
        UNFINISHED.set(this, 1);
        this.submission = session.observer.commandSubmitted();
        stream.device().commandSubmitted(stream.kind());
    }

    /**
     * Marks the start of its wait (for the observer's wait time) unless marked already: when its submission lets
     * go of it with dependencies pending, when the device queue queues it, when it is handed to a lane. One that
     * runs inline at once is never marked, and its wait is 0 (it waited the submission's own sub-microsecond path).
     * Called only by the thread that moves the command on at that point.
     */
    void waiting() {
        if (waitingSince == 0) {
            waitingSince = System.nanoTime();
        }
    }

    /** Its event: itself. */
    Event event() {
        return this;
    }

    /** Whether it has not settled yet (nor begun to): it can still be cancelled or waited for natively. */
    boolean pending() {
        return stage != DONE;
    }

    /** Adds a dependency that passes failure on. Only before {@link #release()}, under the submit lock. */
    void dependOnData(Event dep) {
        Session.LastDependency last = session.lastDependency;
        if (dep == Event.SUCCEEDED || dep == this || (last.of == this && dep == last.event && last.data)) {
            return;
        }
        last.set(this, dep, true);
        if (dependNatively(dep, true)) {
            return;
        }
        UNFINISHED.getAndAdd(this, 1);
        dep.onDone(this);
    }

    /**
     * Adds a dependency on what this command uses (an explicit wait, what wrote the data it reads or keeps): one
     * that passes failure on, unless its session's dependencies only order ({@link Session#setDependenciesOnlyOrder}).
     * Only before {@link #release()}, under the submit lock.
     */
    void dependOnInput(Event dep) {
        if (session.dependenciesOnlyOrder()) {
            dependOnOrder(dep);
        } else {
            dependOnData(dep);
        }
    }

    /** Adds a dependency that only orders. Only before {@link #release()}, under the submit lock. */
    void dependOnOrder(Event dep) {
        Session.LastDependency last = session.lastDependency;
        if (dep == Event.SUCCEEDED || dep == this || (last.of == this && dep == last.event) || dep.isDone()) {
            return; // (the same event just added, as data or order, already orders this command after it)
        }
        last.set(this, dep, false);
        if (dependNatively(dep, false)) {
            return;
        }
        UNFINISHED.getAndAdd(this, 1);
        EventListener l = orderOnly;
        if (l == null) {
            l = orderOnly = this::orderDone;
        }
        dep.onDone(l);
    }

    /**
     * Waits for {@code dep} on the device when its command is on a lane of this command's backend that
     * has markers: a marker at that lane's end (one per lane) and a listener for its settling. False
     * when the host must wait (not on a lane yet, run inline, another backend, no markers).
     */
    private boolean dependNatively(Event dep, boolean data) {
        if (!(dep instanceof Command p) || !p.pending() || op == null || !p.onLane) {
            return false;
        }
        NativeStream lane = p.lane;
        NativeStream mine = stream.nativeStream();
        // (the devices' backends, not their ids': a peer's devices are all the remote backend's, whatever theirs)
        if (lane == null || mine == null || !p.stream.device().backend().equals(stream.device().backend())) {
            return false;
        }
        NativeWaits nw = nativeWaits;
        StreamMarker m = nw == null ? null : nw.on(lane); // one taken earlier covers every command submitted before it
        if (m == null) {
            m = lane.mark();
            if (m == null || !mine.canWaitFor(m)) {
                return false;
            }
            if (nw == null) {
                nw = nativeWaits = new NativeWaits();
            }
            nw.add(lane, m);
        }
        nw.waitForOneMore();
        EventListener l;
        if (data) {
            l = nw.data;
            if (l == null) {
                l = nw.data = d -> {
                    if (d.isFailed()) {
                        DEP_FAILURE.compareAndSet(this, null, DependencyFailedException.of(d));
                    }
                    nativeSettled();
                };
            }
        } else {
            l = nw.order;
            if (l == null) {
                l = nw.order = d -> nativeSettled();
            }
        }
        dep.onDone(l);
        return true;
    }

    /** A dependency waited for natively has settled; the last of them (after its own end) settles the event. */
    private void nativeSettled() {
        if (nativeWaits.settledOne()) {
            settle(endCause, deviceNanos);
        }
    }

    /** Drops the submitter's hold: from here on the command starts when its dependencies are done. */
    void release() {
        if (unfinished > 1) {
            waiting(); // (before the hold goes: a dependency may then start and end it on another thread)
        }
        if ((int) UNFINISHED.getAndAdd(this, -1) == 1) {
            start();
        }
    }

    @Override
    public void onEvent(Event dep) {
        if (dep.isFailed()) {
            DEP_FAILURE.compareAndSet(this, null, DependencyFailedException.of(dep));
        }
        orderDone(dep);
    }

    private void orderDone(Event dep) {
        if ((int) UNFINISHED.getAndAdd(this, -1) == 1) {
            start();
        }
    }

    private void start() {
        if (isDone()) {
            // failed from outside before it ran (shutdown aborted it): do not run it any more
            failed(failure());
            return;
        }
        ArraydException failure = depFailure;
        if (failure == null) {
            failure = cancelCause;
        }
        if (failure == null && deadlineNanos != CommandSpec.NO_DEADLINE
                && queue().clock().getAsLong() >= deadlineNanos) {
            failure = deadlineExceeded();
        }
        if (failure != null) {
            failed(failure); // trampolined: a long chain of failures is a loop, not a recursion
            return;
        }
        if (op == null) {
            // a marker (a streaming merge, a prefetch already satisfied): nothing for the device to do
            requestEnd(null, 0, false);
            return;
        }
        queue().ready(this);
    }

    private DeviceQueue queue() {
        return stream.device().queue();
    }

    /**
     * Cancels the command with {@code cause} (CANCELLED or DEADLINE_EXCEEDED); the first cause wins.
     * Queued: it leaves the queue and fails now. Waiting for dependencies: it fails, without running,
     * once they are done (failing it earlier would release commands ordered after it while those
     * dependencies still run). Running: it finishes, and its event fails with the cause instead of
     * carrying its result.
     */
    void cancel(ArraydException cause) {
        if (markCancelled(cause)) {
            dropIfQueued();
        }
    }

    /**
     * The first half of {@link #cancel}: records the cause (the first one wins; false if it had one).
     * Cancelling several commands marks them all before dropping any: dropping one settles its event,
     * which may make another of them ready, and that one must find itself cancelled already.
     */
    boolean markCancelled(ArraydException cause) {
        return CANCEL.compareAndSet(this, null, cause);
    }

    /** The second half of {@link #cancel}: a queued command leaves the queue and fails now. */
    void dropIfQueued() {
        ArraydException cause = cancelCause;
        if (cause != null && stage == QUEUED && queue().remove(this)) {
            failed(cause);
        }
    }

    /**
     * The third part of a cancel: a command already handed to its native stream is offered back to it
     * ({@link NativeStream#cancel}), so a backend that can still drop it (a peer's) does.
     */
    void cancelOnLane() {
        if (onLane && !isDone()) { // (lane is written before the volatile onLane)
            lane.cancel(this);
        }
    }

    /** After the dispatcher queued it: a cancel that raced with queueing takes it out again. */
    void queuedNow() {
        ArraydException cause = cancelCause;
        if (cause != null && queue().remove(this)) {
            failed(cause);
        }
    }

    /** The dispatcher found it queued past its deadline and took it out. */
    void deadlinePassed() {
        CANCEL.compareAndSet(this, null, deadlineExceeded());
        failed(cancelCause);
    }

    private ArraydException deadlineExceeded() {
        return new ArraydException(ErrorCode.DEADLINE_EXCEEDED, "event " + id() + ": deadline passed "
                + (queue().clock().getAsLong() - deadlineNanos) / 1_000 + " µs ago, before the command could run");
    }

    /** Never run inline: handed to its lane. */
    static final byte INLINE_NEVER = 0;
    /** Expected to take at most the fast-path bound: run inline on whichever thread makes it ready. */
    static final byte INLINE_SHORT = 1;
    /**
     * Expected within the bound for a completing thread ({@link SchedulerConfig#completionFastPathNanos}): run
     * inline there, one such launch per completion loop ({@link Trampoline#mayTakeLongLaunch}).
     */
    static final byte INLINE_FROM_COMPLETION = 2;

    /**
     * Whether {@link #launch()} will try to run it inline, on the dispatching thread (its lane may still refuse);
     * the same answer on that thread until the launch, which follows the dispatch there.
     */
    boolean runsInline() {
        return nativeWaits == null
                && (inline == INLINE_SHORT || inline == INLINE_FROM_COMPLETION && Trampoline.mayTakeLongLaunch());
    }

    /** Whether it runs inline only as a completion loop's one launch past the plain fast-path bound. */
    boolean longInline() {
        return inline == INLINE_FROM_COMPLETION;
    }

    /** A launch expected to take at least {@link SchedulerConfig#BESIDE_MIN_NANOS} (see {@link #launch()}). */
    boolean worthRunningBeside() {
        CompiledKernel k = kernel;
        return k != null && k.cost().estimateNanos(items) >= SchedulerConfig.BESIDE_MIN_NANOS;
    }

    /** Dispatched by the device queue (state RUNNING, a slot held, {@link #lane} chosen): run it. */
    void launch() {
        if (isDone() || cancelCause != null) {
            failed(isDone() ? failure() : cancelCause);
            return;
        }
        if (runsInline()) {
            // Short and ready: run it here. Its completion may make other short commands ready on
            // this thread; the trampoline runs those after this one instead of nesting them. A launch
            // long enough to be worth a hand-off goes to its lane instead when another is queued here
            // already: the two run side by side rather than one after the other.
            if (Trampoline.runLaunch(this)) {
                return;
            }
            queue().notInline();
        }
        submitToLane();
    }

    /** Trampolined: the inline launch, or the end once one was requested. */
    @Override
    public void run() {
        int es = endState;
        if (es == END_READY) {
            end(endCause, deviceNanos);
        } else if (es == END_NONE) {
            runHereOrQueue();
        } // else claimed: the claiming thread runs the end
    }

    private void runHereOrQueue() {
        if (!lane.tryRunInline(op, this)) {
            queue().notInline(); // it may wait on the lane: the device's busy time takes the clock's interval
            submitToLane();
        }
    }

    private void submitToLane() {
        waiting();
        try {
            if (nativeWaits == null) {
                lane.submit(op, this);
            } else {
                StreamMarker[] markers = nativeWaits.markers();
                for (StreamMarker m : markers) {
                    if (!lane.canWaitFor(m)) {
                        throw new IllegalStateException(m + " cannot be waited for on " + lane);
                    }
                }
                lane.submitAfter(markers, op, this);
            }
            onLane = true;
        } catch (RuntimeException e) {
            failed(e instanceof ArraydException a ? a
                    : new ArraydException(ErrorCode.INTERNAL, "submit to " + stream + " failed: " + e, e));
        }
    }

    /** The deadline on System.nanoTime (the scheduler's clock may be another: a test's). */
    @Override
    public long startByNanos() {
        if (deadlineNanos == CommandSpec.NO_DEADLINE) {
            return Long.MAX_VALUE;
        }
        long left = deadlineNanos - queue().clock().getAsLong();
        long now = System.nanoTime();
        return left >= Long.MAX_VALUE - now ? Long.MAX_VALUE - 1 : now + left;
    }

    @Override
    public void completed(long deviceNanos) {
        CompiledKernel k = kernel;
        if (k != null) {
            k.cost().record(deviceNanos, items);
            k.history(stream.device().index()).record(deviceNanos, items);
        }
        requestEnd(null, deviceNanos, true);
    }

    @Override
    public void failed(ArraydException cause) {
        requestEnd(cause, 0, false);
    }

    /**
     * Ends the command through the trampoline; only the first request counts (end() runs once anyway).
     * {@code deviceDone}: the device finished it (the caller is the thread completing the device's work).
     */
    private void requestEnd(ArraydException cause, long deviceNanos, boolean deviceDone) {
        if (endState != END_NONE || !END.compareAndSet(this, END_NONE, END_CLAIMED)) {
            return;
        }
        endCause = cause;
        this.deviceNanos = deviceNanos;
        END.setRelease(this, END_READY); // publishes the two fields above to run()'s volatile read (no fence needed)
        if (deviceDone) {
            Trampoline.runCompletion(this);
        } else {
            Trampoline.run(this);
        }
    }

    /**
     * Its device work is over (or it never ran): settles now, or — when it waited natively for commands
     * whose events have not settled yet — once the last of them has (see {@link #nativeSettled}).
     */
    private void end(ArraydException cause, long deviceNanos) {
        if (nativeWaits == null || nativeWaits.settledOne()) {
            settle(cause, deviceNanos);
        }
    }

    /** Exactly once: frees its slot if it had one, then settles its event. */
    private void settle(ArraydException cause, long deviceNanos) {
        if (nativeWaits != null && depFailure != null) {
            // it ran, but on what a failed command left: it fails with that cause, the first in the chain, even when
            // it failed too (a peer's device then reports the same failure in its own words)
            cause = depFailure;
        }
        int was = (int) STAGE.getAndSet(this, DONE);
        if (was == DONE) {
            return;
        }
        long now = 0; // one reading for the queue's busy time and the observer's wait time, when either needs it
        if (was == RUNNING) {
            now = queue().done(this, deviceNanos, waitingSince != 0); // before the event: a dependent may take the slot
        }
        ArraydException dropped = cause == null ? cancelCause : null;
        if (isDone()) {
            finish(CommandOutcome.ABORTED, deviceNanos, now);
        } else if (cause == null && dropped == null) {
            // observers before the event fires: whoever sees the event done also sees it counted;
            // and the session forgets it first: whoever sees it done and looks the id up finds it settled
            finish(CommandOutcome.SUCCEEDED, deviceNanos, now);
            session.settled(this);
            succeed(deviceNanos, pendingResult());
            return;
        } else {
            ArraydException c = cause != null ? cause : dropped;
            finish(c instanceof DependencyFailedException ? CommandOutcome.DEPENDENCY_FAILED
                    : c.code() == ErrorCode.CANCELLED ? CommandOutcome.CANCELLED
                    : c.code() == ErrorCode.DEADLINE_EXCEEDED && c == cancelCause ? CommandOutcome.DEADLINE_EXCEEDED
                    : CommandOutcome.FAILED, deviceNanos, now);
            fail(c);
        }
        session.settled(this);
    }

    /** Exactly once per command: the device called back (or the command was failed before running). */
    private void finish(CommandOutcome outcome, long deviceNanos, long now) {
        if (kernel != null) {
            kernel.module().release();
        }
        StreamKind sk = stream.kind();
        stream.device().commandFinished(sk);
        if (expectedNanos > 0) {
            stream.device().backlogDone((long) expectedNanos);
        }
        long wait = waitingSince == 0 ? 0
                : Math.max(0, (now != 0 ? now : System.nanoTime()) - waitingSince - deviceNanos);
        CommandKind kind = CommandKind.of(op);
        session.observer.commandFinished(kind, kernel == null ? null : kernel.name(), stream.device(), sk, outcome, wait,
                deviceNanos, kind.isTransfer() ? items : 0, submission);
        // the event outlives the command's work (see the class comment)
        op = null;
        kernel = null;
        submission = null;
    }
}
