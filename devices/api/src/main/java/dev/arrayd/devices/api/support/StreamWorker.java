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
 * What every backend's stream shares: an in-order {@link NativeStream} served by one dedicated platform
 * thread, the worker, fed through a lock-free {@link CommandQueue}.
 *
 * <pre>
 *  submit / offer ─▶ MPSC queue ─▶ worker: work() until it finds nothing, then spin, then park
 * </pre>
 *
 * <p>A backend implements {@link #work()}: take what is queued and run it (the CPU executes one command;
 * OpenCL and CUDA enqueue up to a bound and complete the oldest), calling {@link #complete} exactly once
 * per accepted entry, in order. Optional hooks: {@link #setUp()} and {@link #tearDown()} on the worker,
 * {@link #outstanding()} for work held elsewhere, {@link #mayJoin()} and {@link #onClosed()} for close.
 *
 * <p><b>Latency.</b> Waking a parked thread costs tens of µs on a small VM, which would dominate an
 * empty-kernel round trip. So the worker spins for {@code spinNanos} after running out of work before it
 * parks, and {@link #offer} pays for an unpark only when the worker has actually parked ({@link SpinPark}).
 * On a machine with two cores or fewer a spinning worker takes the core that the transport threads need,
 * which costs more than the wake-up it saves, so it barely spins there ({@link #DEFAULT_SPIN_NANOS}).
 *
 * <p><b>Close.</b> An entry offered after {@link #close()} began is refused: {@link #submit} fails its
 * callback with FAILED_PRECONDITION on the submitting thread (there is no worker left to call it). The
 * worker ends once every accepted entry has completed ({@code pending}, which is also what
 * {@link #isIdle()} reads, and {@link #outstanding()}), and close waits for it unless called from it.
 */
public abstract class StreamWorker implements NativeStream {

    /** About one wake-up's cost on a machine with spare cores; barely any spin on two cores or fewer. */
    public static final long DEFAULT_SPIN_NANOS = Runtime.getRuntime().availableProcessors() > 2 ? 30_000 : 2_000;

    private static final Logger log = LoggerFactory.getLogger(StreamWorker.class);

    private final DeviceId device;
    private final String name;
    private final CommandQueue queue = new CommandQueue();
    /** Accepted entries not yet completed. */
    private final AtomicLong pending = new AtomicLong();
    private final Thread worker;
    private final SpinPark idle;
    /** Whether the worker has work or may end: what its idle wait waits for (made once). */
    private final java.util.function.BooleanSupplier ready = () -> !queueEmpty() || finished();
    private volatile boolean closing;

    /**
     * Makes the worker thread, {@code arrayd-<threadPrefix>-stream-<name>}; the subclass starts it with
     * {@link #start()} at the end of its constructor.
     */
    protected StreamWorker(DeviceId device, String name, String threadPrefix, long spinNanos) {
        this.device = device;
        this.name = name;
        this.idle = new SpinPark(spinNanos);
        this.worker = new Thread(this::serve, "arrayd-" + threadPrefix + "-stream-" + name);
        worker.setDaemon(true);
    }

    /** Starts the worker (once, when the subclass is fully constructed). */
    protected final void start() {
        worker.start();
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
        if (!offer(command, callback)) {
            callback.failed(closedError());
        }
    }

    /**
     * Queues an entry for the worker (any thread; never blocks). False when the stream is closing: the
     * entry was refused and the caller answers for it.
     */
    protected final boolean offer(DeviceCommand command, CommandCallback callback) {
        pending.incrementAndGet();
        if (closing) {
            pending.decrementAndGet();
            LockSupport.unpark(worker); // it may be waiting for this very count to drop
            return false;
        }
        queue.offer(command, callback);
        idle.wake(worker);
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

    @Override
    public void close() {
        closing = true;
        LockSupport.unpark(worker);
        if (mayJoin()) {
            Joins.uninterruptibly(worker);
        }
        onClosed();
    }

    /** Whether {@link #close()} may wait for the worker: not on the worker itself (a callback closing its stream). */
    protected boolean mayJoin() {
        return Thread.currentThread() != worker;
    }

    /** After close (the worker has ended if close waited for it): e.g. the device forgets the stream. */
    protected void onClosed() {
    }

    /** Whether the calling thread is this stream's worker. */
    protected final boolean onWorker() {
        return Thread.currentThread() == worker;
    }

    /** Wakes the worker (e.g. when {@link #outstanding()} dropped while it waits to end). */
    protected final void wake() {
        LockSupport.unpark(worker);
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

    /** On the worker, before the first {@link #work()}. */
    protected void setUp() {
    }

    /** On the worker, after the last {@link #work()} (also when it threw). */
    protected void tearDown() {
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
        try {
            setUp();
            for (;;) {
                if (work()) {
                    continue;
                }
                if (finished()) {
                    return;
                }
                idle.idle(ready);
            }
        } finally {
            tearDown();
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
