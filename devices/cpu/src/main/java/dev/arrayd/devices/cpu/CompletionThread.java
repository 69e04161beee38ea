package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.support.Joins;
import dev.arrayd.devices.api.support.SpinPark;
import dev.arrayd.devices.api.support.StreamWorker;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * The thread, one per device, that calls back for the commands its stream workers executed, so that the
 * workers can stay at the kernels' lowered priority ({@link ComputeThreadPriority}) while completions run
 * at the daemon's.
 *
 * <p>Why: a completion is the scheduler's bookkeeping, under locks that the transport threads take too
 * (the device queue, the session's event table, and the submission lock that a transport thread holds
 * while it waits for those). Run by a lowered thread, it is a priority inversion: a lowered thread
 * preempted while it holds such a lock (the completion itself wakes the session's transport thread,
 * which preempts it) makes every transport thread that wants the lock wait until the lowered thread
 * gets a core again, milliseconds on a host with no idle core. A worker cannot lower itself for the
 * kernel and go back for the completion: Linux lets a thread raise its nice value but not lower it
 * again without {@code CAP_SYS_NICE}, which a sidecar does not have. (With it, that variant measured
 * worse under a flood than this thread; see the tenants benchmark's notes.)
 *
 * <p>It runs at the priority of the thread that opened the device (the daemon's). Callbacks run in the
 * order their commands finished, so those of one stream keep that stream's order; the worker hands over
 * and goes on with its next command at once. The cost is a hand-off per queued command: a chain of
 * queued commands whose next link is launched by the previous one's completion crosses two threads per
 * link. Like a stream worker, the thread spins for {@link StreamWorker#DEFAULT_SPIN_NANOS} before it parks, and a
 * producer unparks it only when it has parked.
 */
final class CompletionThread implements AutoCloseable {

    /** A command's end, as its worker saw it. */
    record Finished(CpuStream stream, DeviceCommand command, CommandCallback callback, long deviceNanos,
            ArraydException failure) {}

    private final ConcurrentLinkedQueue<Finished> queue = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private final SpinPark idle = new SpinPark(StreamWorker.DEFAULT_SPIN_NANOS);
    private volatile boolean closing;
    private volatile boolean running; // a callback is running (see busy())
    private final java.util.function.BooleanSupplier ready = () -> !queue.isEmpty() || closing;

    /** Starts the thread; call on a thread of the daemon's priority (a new thread inherits its creator's). */
    CompletionThread(String name) {
        this.thread = new Thread(this::serve, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Any thread: queues a completion. */
    void post(Finished f) {
        queue.offer(f);
        idle.wake(thread);
    }

    /** Whether the calling thread is this one: a callback running on it. */
    boolean isCurrent() {
        return Thread.currentThread() == thread;
    }

    /** Runs what is queued, then ends; call after every stream of the device has closed (nothing more is posted). */
    @Override
    public void close() {
        closing = true;
        LockSupport.unpark(thread);
        if (Thread.currentThread() == thread) {
            return;
        }
        Joins.uninterruptibly(thread);
    }

    /**
     * Whether completions are queued or one is being called back: the dependents they release may be
     * dispatched to a worker that just went idle any moment now.
     */
    boolean busy() {
        return running || !queue.isEmpty();
    }

    private void serve() {
        for (;;) {
            Finished f = queue.poll();
            if (f != null) {
                running = true;
                try {
                    f.stream().completeHandedOver(f);
                } finally {
                    running = false;
                }
                continue;
            }
            if (closing) {
                return;
            }
            idle.idle(ready);
        }
    }
}
