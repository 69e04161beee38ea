package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.NativeStream;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every backend's stream shares: an in-order {@link NativeStream} served by a platform thread, the
 * worker, fed through a lock-free {@link CommandQueue}.
 *
 * <pre>
 *  submit / offer ─▶ MPSC queue ─▶ worker: work() until it finds nothing, then spin, then park
 * </pre>
 *
 * <p>A backend implements {@link #work()}: take what is queued and run it (the CPU executes one command;
 * OpenCL and CUDA enqueue up to a bound and complete the oldest), calling {@link #complete} exactly once
 * per accepted entry, in order. Optional hooks: {@link #setUp()} and {@link #tearDown()} once per stream,
 * {@link #threadStarted()} and {@link #threadEnded()} once per worker thread, {@link #outstanding()} for work
 * held elsewhere, {@link #mayJoin()} and {@link #onClosed()} for close.
 *
 * <p><b>Threads.</b> An idle stream costs no thread: the worker starts with the first entry offered, and
 * one that found nothing to do for {@code idleRetireNanos} ends (retires); the next entry starts another.
 * So a daemon with a thousand open streams has threads only for those that ran something in the last few
 * seconds. The hand-over is Dekker-style, like {@link SpinPark}'s: a retiring worker first withdraws
 * ({@code current = null}) and then looks at the queue once more; an offer first queues and then reads
 * {@code current}; one of them sees the other, so no entry is left without a worker. A backend whose
 * {@link #setUp()} binds state to its thread (CUDA's context) passes {@code idleRetireNanos = 0}: its
 * worker starts with the stream and lives as long as it.
 *
 * <p><b>Latency.</b> Waking a parked thread costs tens of µs on a small VM, which would dominate an
 * empty-kernel round trip. So the worker spins for {@code spinNanos} after running out of work before it
 * parks, and {@link #offer} pays for an unpark only when the worker has actually parked ({@link SpinPark}).
 * On a machine with two cores or fewer a spinning worker takes the core that the transport threads need,
 * which costs more than the wake-up it saves, so it barely spins there ({@link #DEFAULT_SPIN_NANOS}).
 * The exception is right after a command whose callback is still running on another thread (a CPU
 * device's completion thread): the commands that callback releases often come back to this worker,
 * so it stays awake until the callback is done, yielding its core to any thread that wants it, at most
 * {@link #EXPECT_SPIN_NANOS} once per command ({@link #expectingWork()}). (Spinning without yielding
 * measured the same for the chain but doubled a polite client's p99 beside a flood of kernels.)
 *
 * <p><b>Close.</b> An entry offered after {@link #close()} began is refused: {@link #submit} fails its
 * callback with FAILED_PRECONDITION on the submitting thread (there is no worker left to call it). The
 * worker ends once every accepted entry has completed ({@code pending}, which is also what
 * {@link #isIdle()} reads, and {@link #outstanding()}), and close waits for it unless called from it.
 */
public abstract class StreamWorker implements NativeStream {

    /** About one wake-up's cost on a machine with spare cores; barely any spin on two cores or fewer. */
    public static final long DEFAULT_SPIN_NANOS = Runtime.getRuntime().availableProcessors() > 2 ? 30_000 : 2_000;
    /** How long a worker finds nothing to do before it ends (a thread start, ~100 µs, is far cheaper). */
    public static final long DEFAULT_IDLE_RETIRE_NANOS = 5_000_000_000L;

    private static final Logger log = LoggerFactory.getLogger(StreamWorker.class);

    private final DeviceId device;
    private final String name;
    private final CommandQueue queue = new CommandQueue();
    /** Accepted entries not yet completed. */
    private final AtomicLong pending = new AtomicLong();
    private final String threadName;
    private final long idleRetireNanos;
    private final SpinPark idle;
    /** Whether the worker has work or may end: what its idle wait waits for (made once). */
    private final java.util.function.BooleanSupplier ready = () -> !queueEmpty() || finished();
    private volatile boolean closing;
    /** Guards starting and retiring workers. */
    private final Object lifecycle = new Object();
    /** The live worker, or null while none runs (written under {@code lifecycle}, read anywhere). */
    private volatile Thread current;
    /** Whether the stream was torn down: no worker starts after that. */
    @GuardedBy("lifecycle")
    private boolean tornDown;
    /** Whether {@link #setUp()} ran; read and written by workers only, one after the other (handed over by the lock). */
    private boolean setUpDone;

    /**
     * A stream whose worker thread, {@code arrayd-<threadPrefix>-stream-<name>}, starts with its first entry
     * and retires after {@link #DEFAULT_IDLE_RETIRE_NANOS} without work. The subclass calls {@link #start()} at
     * the end of its constructor.
     */
    protected StreamWorker(DeviceId device, String name, String threadPrefix, long spinNanos) {
        this(device, name, threadPrefix, spinNanos, DEFAULT_IDLE_RETIRE_NANOS);
    }

    /**
     * @param idleRetireNanos how long a worker finds nothing to do before it ends; 0: the worker starts with
     *                        the stream ({@link #start()}) and never retires
     */
    protected StreamWorker(DeviceId device, String name, String threadPrefix, long spinNanos, long idleRetireNanos) {
        this.device = device;
        this.name = name;
        this.idle = new SpinPark(spinNanos);
        this.threadName = "arrayd-" + threadPrefix + "-stream-" + name;
        this.idleRetireNanos = idleRetireNanos;
    }

    /** Called once the subclass is fully constructed: starts the worker of a stream that never retires it. */
    protected final void start() {
        if (idleRetireNanos == 0) {
            ensureWorker();
        }
    }

    /** Starts a worker unless one runs or the stream was torn down; returns the live worker (or null). */
    private Thread ensureWorker() {
        synchronized (lifecycle) {
            Thread t = current;
            if (t == null && !tornDown) {
                t = new Thread(this::serve, threadName);
                t.setDaemon(true);
                current = t;
                t.start();
            }
            return t;
        }
    }

    @Override
    public final DeviceId device() {
        return device;
    }

    /** The stream's name (for messages and thread names). */
    public final String name() {
        return name;
    }

    @Override
    public void submit(DeviceCommand command, CommandCallback callback) {
        Objects.requireNonNull(callback, "callback");
        if (command instanceof DeviceCommand.Sequence sequence && !runsSequencesWhole()) {
            SequenceParts.submit(sequence, callback, this::submitOne);
            return;
        }
        submitOne(command, callback);
    }

    private void submitOne(DeviceCommand command, CommandCallback callback) {
        if (!offer(command, callback)) {
            callback.failed(closedError());
        }
    }

    /**
     * Whether {@link #work()} runs a {@link DeviceCommand.Sequence} as one entry (the CPU's executor does);
     * false makes {@link #submit} queue its parts one by one ({@link SequenceParts}), with one answer.
     */
    protected boolean runsSequencesWhole() {
        return true;
    }

    /**
     * Queues an entry for the worker (any thread; never blocks). False when the stream is closing: the
     * entry was refused and the caller answers for it.
     */
    protected final boolean offer(DeviceCommand command, CommandCallback callback) {
        pending.incrementAndGet();
        if (closing) {
            pending.decrementAndGet();
            unpark(); // it may be waiting for this very count to drop
            return false;
        }
        queue.offer(command, callback);
        Thread t = current; // after the entry is queued: a retiring worker looks at the queue after it withdraws
        if (t != null) {
            idle.wake(t);
        } else {
            ensureWorker();
        }
        return true;
    }

    /** What a command offered to a closing stream fails with. */
    protected final ArraydException closedError() {
        return new ArraydException(ErrorCode.FAILED_PRECONDITION,
                "stream " + name + " of " + device + ": closed (expected: an open stream)");
    }

    @Override
    public boolean isIdle() {
        return pending.get() == 0;
    }

    /** Whether {@link #close()} has begun. */
    protected final boolean isClosing() {
        return closing;
    }

    /**
     * Closes the stream: entries offered from now on are refused, those accepted complete, and the worker
     * tears the stream down and ends (one is started for that if none runs); waits for it unless
     * {@link #mayJoin()} says no.
     */
    @Override
    public void close() {
        closing = true;
        Thread t = ensureWorker(); // a closing worker does not retire: this one ends the stream
        if (t != null) {
            LockSupport.unpark(t);
            if (mayJoin()) {
                Joins.uninterruptibly(t);
            }
        }
        onClosed();
    }

    /** Whether {@link #close()} may wait for the worker: not on the worker itself (a callback closing its stream). */
    protected boolean mayJoin() {
        return Thread.currentThread() != current;
    }

    /** After close (the worker has ended if close waited for it): e.g. the device forgets the stream. */
    protected void onClosed() {
    }

    /** The live worker thread, or null while none runs (tests). */
    final Thread currentWorker() {
        return current;
    }

    /** Whether the calling thread is this stream's worker. */
    protected final boolean onWorker() {
        return Thread.currentThread() == current;
    }

    /** Wakes the worker (e.g. when {@link #outstanding()} dropped while it waits to end). */
    protected final void wake() {
        unpark();
    }

    private void unpark() {
        Thread t = current;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    // ---------------------------------------------------------------- the worker

    /** Worker only: the next queued entry, or null. Read its command and callback, then {@link CommandQueue.Node#release()} it. */
    protected final CommandQueue.Node poll() {
        return queue.poll();
    }

    /** Worker only: whether nothing is queued (counting offers not yet linked). */
    protected final boolean queueEmpty() {
        return queue.isEmpty();
    }

    /**
     * Worker only: takes what is queued and runs or completes it; true when it did anything (the loop
     * calls it again at once), false when there was nothing to do (the loop spins, then parks).
     */
    protected abstract boolean work();

    /** The longest a worker stays awake (yielding), after a command, while {@link #expectingWork()}. */
    public static final long EXPECT_SPIN_NANOS = 100_000;

    /**
     * Whether work for this stream may come any moment now (the callback of what it ran is still running on
     * another thread, and the commands it releases often come back here): right after a command the worker
     * then stays awake, yielding its core, instead of parking, until this turns false, work comes, or
     * {@link #EXPECT_SPIN_NANOS} pass; once per command, so a stream never stays awake longer than that per
     * command it ran. The default: never.
     */
    protected boolean expectingWork() {
        return false;
    }

    /** Once per stream, on its first worker, before the first {@link #work()}. */
    protected void setUp() {
    }

    /**
     * Once per stream, on its last worker, after the last {@link #work()} (also when it threw); also for a
     * stream that never ran anything (a worker is started to close it).
     */
    protected void tearDown() {
    }

    /** On each worker thread as it starts, before anything else (e.g. its scheduling priority). */
    protected void threadStarted() {
    }

    /** On each worker thread as it ends (it retired, or the stream is over). */
    protected void threadEnded() {
    }

    /** Entries accepted and counted done but still being completed elsewhere: the worker ends only at zero. */
    protected long outstanding() {
        return 0;
    }

    /**
     * Counts one accepted entry done, then calls back. Counted first, so a callback (or its waiter) sees
     * the stream idle.
     */
    protected final void complete(DeviceCommand command, CommandCallback callback, long deviceNanos,
            ArraydException failure) {
        countDone();
        callBack(command, callback, deviceNanos, failure);
    }

    /** Counts one accepted entry done (its callback is someone else's business, e.g. a completion thread's). */
    protected final void countDone() {
        pending.decrementAndGet();
    }

    /** Calls back, logging (never passing on) what the callback throws: callbacks must not throw. */
    protected final void callBack(DeviceCommand command, CommandCallback callback, long deviceNanos,
            ArraydException failure) {
        try {
            if (failure == null) {
                callback.completed(deviceNanos);
            } else {
                callback.failed(failure);
            }
        } catch (Throwable t) {
            log.warn("callback of {} on {} threw (callbacks must not throw)", describe(command), this, t);
        }
    }

    private boolean finished() {
        // pending before outstanding: an entry is counted outstanding before it leaves pending
        return closing && pending.get() == 0 && outstanding() == 0;
    }

    private void serve() {
        Thread me = Thread.currentThread();
        threadStarted();
        boolean over = true; // the stream ends with this worker unless it retires
        try {
            if (!setUpDone) {
                setUpDone = true;
                setUp();
            }
            long idleSince = 0; // 0: it did something since it last found nothing
            for (;;) {
                if (work()) {
                    idleSince = 0;
                    continue;
                }
                if (finished()) {
                    return;
                }
                long now = System.nanoTime();
                boolean justWorked = idleSince == 0;
                if (idleSince == 0) {
                    idleSince = now;
                } else if (idleRetireNanos > 0 && now - idleSince >= idleRetireNanos && retire(me)) {
                    over = false;
                    return;
                }
                if (justWorked && expectingWork()) {
                    // what it just finished is still being called back elsewhere: the command that callback
                    // releases often comes here, and waking a parked worker on an idle core costs tens of µs
                    // on a virtual machine (see the taskbench benchmark's breakdown)
                    long until = now + EXPECT_SPIN_NANOS;
                    while (!ready.getAsBoolean() && expectingWork() && System.nanoTime() < until) {
                        Thread.yield(); // awake, but any other thread on this core goes first
                    }
                    continue;
                }
                idle.idle(ready, idleRetireNanos > 0 ? idleRetireNanos : 0);
            }
        } finally {
            if (over) {
                synchronized (lifecycle) {
                    tornDown = true;
                }
                tearDown();
            }
            threadEnded();
        }
    }

    /**
     * The worker withdraws, then looks at the queue once more: true when it may end; false when an entry came
     * in meanwhile and it took its place back (or the stream is closing: a closing worker ends the stream).
     */
    private boolean retire(Thread me) {
        synchronized (lifecycle) {
            if (closing || !queueEmpty() || pending.get() != 0 || outstanding() != 0) {
                return false; // work is queued, or still held by the device
            }
            current = null;
        }
        if (queueEmpty() && !closing) {
            return true; // an offer from now on sees no worker and starts one
        }
        synchronized (lifecycle) {
            if (current == null) {
                current = me; // nobody started another: this one serves on
                return false;
            }
            return true; // an offer started another meanwhile; it takes over
        }
    }

    /** A command's kind for messages: "launch", "upload", ... */
    public static String describe(DeviceCommand command) {
        return command == null ? "null command" : command.getClass().getSimpleName().toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return "stream " + name + " of " + device;
    }
}
