package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.support.Joins;
import dev.arrayd.devices.api.support.AfterMarkers;
import dev.arrayd.devices.api.support.CommandQueue;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.StreamMarker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.Semaphore;
import java.util.concurrent.locks.LockSupport;

/**
 * An in-order stream served by one dedicated platform thread (OCANNL's {@code Schedulers.Multicore}).
 *
 * <p>Latency: waking a parked thread costs tens of µs on a small VM, which would dominate an
 * empty-kernel round trip. So the worker spins for {@link #SPIN_NANOS} after running out of work
 * before it parks, and {@link #submit} pays for an unpark only when the worker has actually parked.
 * The handshake is Dekker-style on volatiles: the worker publishes {@code parked} and then re-checks
 * the queue; a producer publishes its node and then reads {@code parked}; one of them sees the other.
 *
 * <p>A command submitted after {@link #close()} began is refused at once: its callback gets
 * FAILED_PRECONDITION on the submitting thread (there is no worker left to call it).
 *
 * <p><b>Markers.</b> {@link #mark()} and {@link #submitAfter} order commands of different streams (of
 * any device of the same backend) without the scheduler: a {@link CpuMarker} is a node in the queue,
 * reached by the worker when everything before it has run; a waiting worker blocks on it before running
 * its command (holding no compute slot while it waits).
 *
 * <p><b>Priority.</b> The worker runs kernels, so it lowers its own priority first
 * ({@link ComputeThreadPriority}). A command's completion (the scheduler's bookkeeping) takes locks that
 * the daemon's transport threads take too, so it must not run lowered: when the device has a
 * {@link CompletionThread} (it does whenever its kernels are lowered), the worker hands each callback
 * to it and goes on with its next command.
 *
 * <p>A launch runs only while it holds one of its device's compute slots (one per device thread):
 * a device of one thread runs one kernel at a time across all its streams, like one core.
 *
 * <p>{@code pending} counts accepted commands not yet completed; it is what {@link #isIdle()} reads
 * and, with {@code handedOver} (callbacks given to the completion thread and not yet returned), what
 * keeps the worker alive on close until every accepted command has had its callback.
 */
final class CpuStream implements NativeStream {

    /**
     * How long an idle worker (or a waiting launch) spins before parking: about one wake-up's cost.
     * On a machine with two cores or fewer a spinning worker takes the core that the transport
     * threads need, which costs more than the wake-up it saves, so it barely spins there.
     */
    static final long SPIN_NANOS = Runtime.getRuntime().availableProcessors() > 2 ? 30_000 : 2_000;

    private static final Logger log = LoggerFactory.getLogger(CpuStream.class);

    private final CpuDevice device;
    private final String name;
    private final CommandQueue queue = new CommandQueue();
    private final AtomicLong pending = new AtomicLong();
    // callbacks handed to the device's completion thread and not yet returned: close() waits for them too
    private final AtomicLong handedOver = new AtomicLong();
    private final StreamExecutor executor;
    private final Thread worker;
    private volatile boolean parked;
    private volatile boolean closing;
    private volatile int workerTid; // the worker's Linux thread id once it runs (0 before, or where unknown)

    CpuStream(CpuDevice device, String name) {
        this.device = device;
        this.name = name;
        this.executor = new StreamExecutor(device);
        this.worker = new Thread(this::serve, "arrayd-cpu" + device.id().ordinal() + "-stream-" + name);
        worker.setDaemon(true);
        worker.start();
    }

    @Override
    public DeviceId device() {
        return device.id();
    }

    String name() {
        return name;
    }

    @Override
    public boolean canWaitFor(StreamMarker marker) {
        return marker instanceof CpuMarker m && m.owner() == device.owner();
    }

    @Override
    public void submitAfter(StreamMarker[] after, DeviceCommand command, CommandCallback callback) {
        submit(command, AfterMarkers.checked(this, after, callback, "the backend of " + device.id()));
    }

    /** A marker node in the queue: the worker reaches it when everything before it has run. */
    private record MarkNode(CpuMarker marker) implements CommandCallback {
        @Override
        public void completed(long deviceNanos) {
            marker.reach();
        }

        @Override
        public void failed(ArraydException cause) {
            marker.reach();
        }
    }

    @Override
    public StreamMarker mark() {
        CpuMarker m = new CpuMarker(device.owner());
        pending.incrementAndGet();
        if (closing) {
            pending.decrementAndGet();
            LockSupport.unpark(worker); // it may be waiting for this very count to drop
            return null; // its last commands may still run: reaching a marker now would be too early
        }
        queue.offer(null, new MarkNode(m));
        if (parked) {
            LockSupport.unpark(worker);
        }
        return m;
    }

    @Override
    public void submit(DeviceCommand command, CommandCallback callback) {
        Objects.requireNonNull(callback, "callback");
        pending.incrementAndGet();
        if (closing) {
            pending.decrementAndGet();
            LockSupport.unpark(worker); // it may be waiting for this very count to drop
            callback.failed(new ArraydException(ErrorCode.FAILED_PRECONDITION,
                    "stream " + name + " of " + device.id() + ": closed (expected: an open stream)"));
            return;
        }
        queue.offer(command, callback);
        if (parked) {
            LockSupport.unpark(worker);
        }
    }

    /**
     * Runs the command on the caller's thread with an executor borrowed from the device (each has
     * its own argument block), so it may run beside the worker. Ordering is the caller's business:
     * the scheduler only does this for commands whose dependencies are complete and whose measured
     * cost is within its fast-path bound (20 µs by default).
     *
     * <p>Such a launch does not wait for a compute slot: behind a flood of long kernels holding every
     * slot, a short one would otherwise go through a worker thread and a queue of slot waiters (two
     * wake-ups, each a time slice away on a busy host) to save the device a few microseconds of
     * oversubscription. The scheduler's dispatch depth still bounds how many run at once.
     */
    @Override
    public boolean tryRunInline(DeviceCommand command, CommandCallback callback) {
        if (closing) {
            return false;
        }
        StreamExecutor borrowed = device.borrowInlineExecutor();
        try {
            run(borrowed, command, callback, false, null);
        } finally {
            device.returnInlineExecutor(borrowed);
        }
        return true;
    }

    @Override
    public boolean isIdle() {
        return pending.get() == 0;
    }

    @Override
    public void close() {
        closing = true;
        LockSupport.unpark(worker);
        CompletionThread completions = device.completions();
        // from a callback (on the worker, or on the completion thread, which the worker waits for): no join
        if (Thread.currentThread() != worker && (completions == null || !completions.isCurrent())) {
            Joins.uninterruptibly(worker);
        }
        device.forget(this);
    }

    private boolean finished() {
        // pending before handedOver: a command is counted in handedOver before it leaves pending
        return closing && pending.get() == 0 && handedOver.get() == 0;
    }

    /** The worker's Linux thread id, 0 until it has started (or where it cannot be read); for tests. */
    int workerTid() {
        return workerTid;
    }

    private void serve() {
        workerTid = ComputeThreadPriority.currentTid().orElse(0);
        ComputeThreadPriority.lowerCurrentThread(device.computeNice());
        try {
            for (;;) {
                CommandQueue.Node node = queue.poll();
                if (node != null) {
                    DeviceCommand command = node.command();
                    CommandCallback callback = node.callback();
                    node.release();
                    if (callback instanceof MarkNode mark) {
                        pending.decrementAndGet();
                        mark.marker().reach();
                        continue;
                    }
                    if (callback instanceof AfterMarkers waits) {
                        for (StreamMarker m : waits.after()) {
                            ((CpuMarker) m).await(); // before taking a compute slot: a waiting stream holds none
                        }
                    }
                    if (command instanceof DeviceCommand.Launch) {
                        device.computeSlots().acquireUninterruptibly();
                        run(executor, command, callback, true, device.computeSlots()); // released before the callback
                    } else {
                        run(executor, command, callback, true, null);
                    }
                    continue;
                }
                if (finished()) {
                    return;
                }
                long spinUntil = System.nanoTime() + SPIN_NANOS;
                while (queue.isEmpty() && !finished() && System.nanoTime() < spinUntil) {
                    Thread.onSpinWait();
                }
                if (!queue.isEmpty() || finished()) {
                    continue;
                }
                parked = true;
                if (queue.isEmpty() && !finished()) {
                    LockSupport.park(this);
                }
                parked = false;
            }
        } finally {
            executor.close();
        }
    }

    /**
     * Executes {@code command} and then calls back. {@code slot}, when not null, is the compute slot
     * the caller took for it: it is released as soon as the command has executed, before the
     * callback. The callback is the scheduler's completion (events, the next dispatch, the session's
     * completion message); holding the slot through it would keep the device's other streams from
     * starting their kernels meanwhile, and on a host with no idle core that work waits for a core.
     */
    private void run(StreamExecutor executor, DeviceCommand command, CommandCallback callback, boolean queued,
            Semaphore slot) {
        long start = System.nanoTime();
        ArraydException failure = null;
        try {
            if (command == null) {
                throw ArraydException.invalid("command: null (expected: a DeviceCommand)");
            }
            executor.execute(command);
        } catch (ArraydException e) {
            failure = e;
        } catch (Throwable t) {
            failure = new ArraydException(ErrorCode.INTERNAL, describe(command) + " failed on " + device.id() + ": " + t, t);
        } finally {
            if (slot != null) {
                slot.release();
            }
        }
        long nanos = System.nanoTime() - start;
        CompletionThread completions = device.completions();
        if (queued && completions != null) {
            handedOver.incrementAndGet();
            completions.post(new CompletionThread.Finished(this, command, callback, nanos, failure));
            return;
        }
        if (queued) {
            // counted done before the callback runs, so a callback (or its waiter) sees the stream idle
            pending.decrementAndGet();
        }
        callBack(command, callback, nanos, failure);
    }

    /**
     * On the device's completion thread: the end of a command this stream's worker executed. Counted
     * done before the callback, as on the worker; a closing worker, which ends only once every callback
     * has returned, is woken after it.
     */
    void completeHandedOver(CompletionThread.Finished f) {
        pending.decrementAndGet();
        callBack(f.command(), f.callback(), f.deviceNanos(), f.failure());
        handedOver.decrementAndGet();
        if (closing) {
            LockSupport.unpark(worker); // it may be waiting for this very count to drop
        }
    }

    private void callBack(DeviceCommand command, CommandCallback callback, long nanos, ArraydException failure) {
        try {
            if (failure == null) {
                callback.completed(nanos);
            } else {
                callback.failed(failure);
            }
        } catch (Throwable t) {
            log.warn("callback of {} on stream {} of {} threw (callbacks must not throw)", describe(command), name, device.id(), t);
        }
    }

    private static String describe(DeviceCommand command) {
        return command == null ? "null command" : command.getClass().getSimpleName().toLowerCase(java.util.Locale.ROOT);
    }

    @Override
    public String toString() {
        return "stream " + name + " of " + device.id();
    }
}
