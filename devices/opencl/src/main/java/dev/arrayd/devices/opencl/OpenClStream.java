package dev.arrayd.devices.opencl;

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
import org.jocl.CL;
import org.jocl.CLException;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_command_queue;
import org.jocl.cl_event;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * An in-order OpenCL command queue served by one worker thread, which both enqueues and completes:
 *
 * <pre>
 *  submit ─▶ MPSC queue ─▶ worker: enqueue everything waiting (up to MAX_IN_FLIGHT), clFlush,
 *                                   wait for the oldest command's event, call its callback, repeat
 * </pre>
 *
 * The device works on later commands while the worker waits for the oldest, and callbacks come
 * exactly once each, in submission order, from this one thread. A waiting thread was chosen over
 * {@code clSetEventCallback}: driver callback threads must not call back into OpenCL or block, and
 * ours would do both (releasing events, running scheduler listeners).
 *
 * <p>Device time is the OpenCL profiling interval from the start of the command's first enqueue to
 * the end of its last (the queue is created with {@code CL_QUEUE_PROFILING_ENABLE}); the host-side
 * wall time when the driver cannot say.
 *
 * <p><b>Markers.</b> {@link #mark()} / {@link #submitAfter} order commands of streams of one OpenCL
 * context without the host: a marker is an OpenCL marker event at the queue's end ({@link ClMarker}),
 * and a waiting command is preceded by {@code clEnqueueBarrierWithWaitList} on it.
 *
 * <p>A command submitted after {@link #close()} began is refused at once: its callback gets
 * FAILED_PRECONDITION on the submitting thread. {@code tryRunInline} declines: an OpenCL completion
 * is a driver wait whose length arrayd cannot bound, which a transport thread must not do.
 */
final class OpenClStream implements NativeStream {

    /** Commands enqueued but not yet completed, at most: bounds the staging memory and events held. */
    static final int MAX_IN_FLIGHT = 64;

    /** How long an idle worker spins before parking; see the CPU stream for why it is short on small machines. */
    static final long SPIN_NANOS = Runtime.getRuntime().availableProcessors() > 2 ? 20_000 : 2_000;

    private static final Logger log = LoggerFactory.getLogger(OpenClStream.class);

    private final OpenClDevice device;
    private final String name;
    private final cl_command_queue queue;
    private final CommandEnqueuer enqueuer;
    private final GuardBuffers guards; // worker only
    private final CommandQueue submitted = new CommandQueue();
    private final ArrayDeque<InFlight> inFlight = new ArrayDeque<>(); // worker only
    private final AtomicLong pending = new AtomicLong();
    private final Thread worker;
    private volatile boolean parked;
    private volatile boolean closing;

    OpenClStream(OpenClDevice device, String name) {
        this.device = device;
        this.name = name;
        this.queue = createQueue(device);
        this.guards = new GuardBuffers(device);
        this.enqueuer = new CommandEnqueuer(device, queue, guards);
        this.worker = new Thread(this::serve, "arrayd-opencl" + device.id().ordinal() + "-stream-" + name);
        worker.setDaemon(true);
        worker.start();
    }

    static cl_command_queue createQueue(OpenClDevice device) {
        try {
            return CL.clCreateCommandQueue(device.context().context(), device.clDevice(), CL.CL_QUEUE_PROFILING_ENABLE, null);
        } catch (CLException e) {
            throw ClErrors.toArrayd(e, "creating a command queue on " + device.id());
        }
    }

    @Override
    public DeviceId device() {
        return device.id();
    }

    /** Markers of streams of the same OpenCL context (events cannot be waited for across contexts). */
    @Override
    public boolean canWaitFor(StreamMarker marker) {
        return marker instanceof ClMarker m && m.context() == device.context();
    }

    @Override
    public void submitAfter(StreamMarker[] after, DeviceCommand command, CommandCallback callback) {
        submit(command, AfterMarkers.checked(this, after, callback, "the OpenCL context of " + device.id()));
    }

    /**
     * The queue entry of {@link #mark()}: the worker enqueues an OpenCL marker and arms {@code marker} with
     * its event; the marker retires when that event completed (or at once, when the stream refused it).
     */
    private record MarkNode(ClMarker marker) implements CommandCallback {

        @Override
        public void completed(long deviceNanos) {
            marker.retire();
        }

        @Override
        public void failed(ArraydException cause) {
            marker.retire();
        }
    }

    /** An OpenCL marker ({@code clEnqueueMarkerWithWaitList}) at the queue's current end. */
    @Override
    public StreamMarker mark() {
        if (closing) {
            return null; // its last commands may still run: a refused marker would be reached too early
        }
        ClMarker marker = new ClMarker(device.context());
        submit(null, new MarkNode(marker));
        // refused by a close that began meanwhile (retired at once, too early): the caller orders on the host
        return closing && marker.retired() ? null : marker;
    }

    /** How long a worker waits for another stream to enqueue a command it must wait for. */
    private static final long MARKER_WAIT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(60);

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
        submitted.offer(command, callback);
        if (parked) {
            LockSupport.unpark(worker);
        }
    }

    @Override
    public boolean isIdle() {
        return pending.get() == 0;
    }

    @Override
    public void close() {
        closing = true;
        LockSupport.unpark(worker);
        if (Thread.currentThread() != worker) {
            Joins.uninterruptibly(worker);
        }
        device.forget(this);
    }

    private boolean finished() {
        return closing && pending.get() == 0;
    }

    private void serve() {
        try {
            for (;;) {
                boolean enqueued = false;
                CommandQueue.Node node;
                while (inFlight.size() < MAX_IN_FLIGHT && (node = submitted.poll()) != null) {
                    InFlight f = new InFlight(node.command(), node.callback());
                    node.release();
                    if (f.callback instanceof MarkNode mark) {
                        enqueueMarker(f); // nothing to run: an event at the queue's end
                        mark.marker().arm(f.failure == null ? f.tail() : null);
                    } else {
                        if (f.callback instanceof AfterMarkers waits) {
                            try {
                                for (StreamMarker m : waits.after()) {
                                    ((ClMarker) m).enqueueWait(queue, MARKER_WAIT_NANOS, toString());
                                }
                            } catch (ArraydException e) {
                                f.failure = e;
                            } catch (CLException e) {
                                f.failure = ClErrors.toArrayd(e, "waiting for a marker on " + this);
                            }
                        }
                        if (f.failure == null) {
                            enqueue(f);
                        }
                    }
                    inFlight.add(f);
                    enqueued = true;
                }
                if (enqueued) {
                    flush();
                }
                InFlight oldest = inFlight.poll();
                if (oldest != null) {
                    complete(oldest);
                    continue;
                }
                if (finished()) {
                    return;
                }
                long spinUntil = System.nanoTime() + SPIN_NANOS;
                while (submitted.isEmpty() && !finished() && System.nanoTime() < spinUntil) {
                    Thread.onSpinWait();
                }
                if (!submitted.isEmpty() || finished()) {
                    continue;
                }
                parked = true;
                if (submitted.isEmpty() && !finished()) {
                    LockSupport.park(this);
                }
                parked = false;
            }
        } finally {
            try {
                CL.clFinish(queue);
                guards.releaseAll();
                CL.clReleaseCommandQueue(queue);
            } catch (CLException e) {
                log.warn("releasing the command queue of {} failed: {}", this, ClInfo.errorName(e.getStatus()));
            }
        }
    }

    private void enqueue(InFlight f) {
        try {
            enqueuer.enqueue(f);
        } catch (ArraydException e) {
            f.failure = e;
        } catch (CLException e) {
            f.failure = ClErrors.toArrayd(e, describe(f.command) + " on " + device.id());
        } catch (Throwable t) {
            f.failure = new ArraydException(ErrorCode.INTERNAL, describe(f.command) + " failed on " + device.id() + ": " + t, t);
        }
    }

    private void enqueueMarker(InFlight f) {
        try {
            cl_event e = new cl_event();
            CL.clEnqueueMarkerWithWaitList(queue, 0, null, e);
            f.track(e);
        } catch (CLException e) {
            f.failure = ClErrors.toArrayd(e, "a marker on " + this);
        }
    }

    private void flush() {
        try {
            CL.clFlush(queue);
        } catch (CLException e) {
            // the waits below report the failure per command
        }
    }

    /** Waits for {@code f}'s last event, then reports. Runs for every command exactly once. */
    private void complete(InFlight f) {
        long nanos = -1;
        cl_event tail = f.tail();
        if (tail != null) {
            try {
                CL.clWaitForEvents(1, new cl_event[] {tail});
                int status = eventStatus(tail);
                if (status < 0 && f.failure == null) {
                    f.failure = ClErrors.status(status, describe(f.command) + " on " + device.id());
                }
            } catch (CLException e) {
                if (f.failure == null) {
                    f.failure = ClErrors.toArrayd(e, describe(f.command) + " on " + device.id());
                }
            }
            if (f.failure == null) {
                nanos = profiledNanos(f);
                if (f.copyBackTo != null) {
                    f.copyBackTo.copyFrom(f.copyBackFrom);
                }
                if (f.guard != null) {
                    f.failure = f.guard.failure();
                }
            }
        }
        if (f.guard != null) {
            try {
                guards.giveBack(f.guard.mem(), f.failure == null);
            } catch (CLException e) {
                log.warn("releasing a guard record of {} failed: {}", this, ClInfo.errorName(e.getStatus()));
            }
            f.guard = null;
        }
        if (nanos < 0) {
            nanos = System.nanoTime() - f.enqueuedNanos;
        }
        try {
            f.releaseNative();
        } catch (CLException e) {
            log.warn("releasing events of {} on {} failed: {}", describe(f.command), this, ClInfo.errorName(e.getStatus()));
        }
        // counted done before the callback runs, so a callback (or its waiter) sees the stream idle
        pending.decrementAndGet();
        try {
            if (f.failure == null) {
                f.callback.completed(nanos);
            } else {
                f.callback.failed(f.failure);
            }
        } catch (Throwable t) {
            log.warn("callback of {} on {} threw (callbacks must not throw)", describe(f.command), this, t);
        }
    }

    private static int eventStatus(cl_event event) {
        int[] status = new int[1];
        CL.clGetEventInfo(event, CL.CL_EVENT_COMMAND_EXECUTION_STATUS, Sizeof.cl_int, Pointer.to(status), null);
        return status[0];
    }

    /** Start of the first enqueue to end of the last, or -1 when profiling info is unavailable. */
    private static long profiledNanos(InFlight f) {
        try {
            long[] start = new long[1];
            long[] end = new long[1];
            CL.clGetEventProfilingInfo(f.first, CL.CL_PROFILING_COMMAND_START, Sizeof.cl_ulong, Pointer.to(start), null);
            CL.clGetEventProfilingInfo(f.tail(), CL.CL_PROFILING_COMMAND_END, Sizeof.cl_ulong, Pointer.to(end), null);
            return end[0] >= start[0] ? end[0] - start[0] : -1;
        } catch (CLException e) {
            return -1;
        }
    }

    private static String describe(DeviceCommand command) {
        return command == null ? "null command" : command.getClass().getSimpleName().toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return "stream " + name + " of " + device.id();
    }
}
