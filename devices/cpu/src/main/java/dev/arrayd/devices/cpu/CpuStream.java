package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.support.HostStreamWorker;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-order stream whose worker executes each command itself (OCANNL's {@code Schedulers.Multicore});
 * the queue, spinning, parking, close and markers are {@link HostStreamWorker}'s (a waiting worker holds no
 * compute slot while it waits for a marker).
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
 * <p>{@code handedOver} counts callbacks given to the completion thread and not yet returned: with the
 * accepted commands not yet completed, it keeps the worker alive on close until every accepted command
 * has had its callback.
 */
final class CpuStream extends HostStreamWorker {

    private final CpuDevice device;
    // callbacks handed to the device's completion thread and not yet returned: close() waits for them too
    private final AtomicLong handedOver = new AtomicLong();
    private final StreamExecutor executor;
    private volatile int workerTid; // the worker's Linux thread id once it runs (0 before, or where unknown)

    CpuStream(CpuDevice device, String name) {
        super(device.id(), name, "cpu" + device.id().ordinal(), DEFAULT_SPIN_NANOS, device.owner(), "cpu marker");
        this.device = device;
        this.executor = new StreamExecutor(device);
        start();
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
        if (isClosing()) {
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

    /** From a callback (on the worker, or on the completion thread, which the worker waits for): no join. */
    @Override
    protected boolean mayJoin() {
        CompletionThread completions = device.completions();
        return super.mayJoin() && (completions == null || !completions.isCurrent());
    }

    @Override
    protected void onClosed() {
        device.forget(this);
    }

    @Override
    protected long outstanding() {
        return handedOver.get();
    }

    /** The worker's Linux thread id, 0 until it has started (or where it cannot be read); for tests. */
    int workerTid() {
        return workerTid;
    }

    @Override
    protected void threadStarted() {
        workerTid = ComputeThreadPriority.currentTid().orElse(0);
        ComputeThreadPriority.lowerCurrentThread(device.computeNice());
    }

    @Override
    protected void tearDown() {
        executor.close();
    }

    /** Launches hold one of the device's compute slots while they run (released before the callback). */
    @Override
    protected void execute(DeviceCommand command, CommandCallback callback) {
        if (command instanceof DeviceCommand.Launch) {
            device.computeSlots().acquireUninterruptibly();
            run(executor, command, callback, true, device.computeSlots());
        } else {
            run(executor, command, callback, true, null);
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
        } else if (queued) {
            complete(command, callback, nanos, failure);
        } else {
            callBack(command, callback, nanos, failure);
        }
    }

    /**
     * While the device's completion thread has completions to call back (this worker's among them), the
     * commands they release may be dispatched here any moment: the worker stays awake for them, yielding its
     * core (at most {@link #EXPECT_SPIN_NANOS} after each command), instead of parking.
     */
    @Override
    protected boolean expectingWork() {
        CompletionThread c = device.completions();
        return c != null && c.busy();
    }

    /**
     * On the device's completion thread: the end of a command this stream's worker executed. Counted
     * done before the callback, as on the worker; a closing worker, which ends only once every callback
     * has returned, is woken after it.
     */
    void completeHandedOver(CompletionThread.Finished f) {
        complete(f.command(), f.callback(), f.deviceNanos(), f.failure());
        handedOver.decrementAndGet();
        if (isClosing()) {
            wake(); // it may be waiting for this very count to drop
        }
    }
}
