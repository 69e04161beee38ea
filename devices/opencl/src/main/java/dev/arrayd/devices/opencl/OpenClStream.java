package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.StreamMarker;
import dev.arrayd.devices.api.support.AfterMarkers;
import dev.arrayd.devices.api.support.CommandQueue;
import dev.arrayd.devices.api.support.StreamWorker;
import dev.arrayd.devices.api.support.ThreadConfined;
import org.jocl.CL;
import org.jocl.CLException;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_command_queue;
import org.jocl.cl_event;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;

/**
 * An in-order OpenCL command queue served by one worker thread ({@link StreamWorker}), which both
 * enqueues and completes:
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
 * <p>{@code tryRunInline} declines: an OpenCL completion
 * is a driver wait whose length arrayd cannot bound, which a transport thread must not do.
 */
final class OpenClStream extends StreamWorker {

    /** Commands enqueued but not yet completed, at most: bounds the staging memory and events held. */
    static final int MAX_IN_FLIGHT = 64;

    /** How long a worker waits for another stream to enqueue a command it must wait for. */
    private static final long MARKER_WAIT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(60);

    private static final Logger log = LoggerFactory.getLogger(OpenClStream.class);

    private final OpenClDevice device;
    private final cl_command_queue queue;
    private final CommandEnqueuer enqueuer;
    @ThreadConfined("worker")
    private final GuardBuffers guards;
    @ThreadConfined("worker")
    private final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();

    OpenClStream(OpenClDevice device, String name) {
        super(device.id(), name, "opencl" + device.id().ordinal(), Runtime.getRuntime().availableProcessors() > 2
                ? 20_000 : 2_000);
        this.device = device;
        this.queue = createQueue(device);
        this.guards = new GuardBuffers(device);
        this.enqueuer = new CommandEnqueuer(device, queue, guards);
        start();
    }

    static cl_command_queue createQueue(OpenClDevice device) {
        try {
            return CL.clCreateCommandQueue(device.context().context(), device.clDevice(), CL.CL_QUEUE_PROFILING_ENABLE, null);
        } catch (CLException e) {
            throw ClErrors.toArrayd(e, "creating a command queue on " + device.id());
        }
    }

    /** Markers of streams of the same OpenCL context (events cannot be waited for across contexts). */
    @Override
    public boolean canWaitFor(StreamMarker marker) {
        return marker instanceof ClMarker m && m.context() == device.context();
    }

    /** Its worker enqueues one device operation per entry: a sequence goes in part by part. */
    @Override
    protected boolean runsSequencesWhole() {
        return false;
    }

    @Override
    public void submitAfter(StreamMarker[] after, DeviceCommand command, CommandCallback callback) {
        submit(command, AfterMarkers.checked(this, after, callback, "the OpenCL context of " + device.id()));
    }

    /**
     * The queue entry of {@link #mark()}: the worker enqueues an OpenCL marker and arms {@code marker} with
     * its event; the marker retires when that event completed.
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
        ClMarker marker = new ClMarker(device.context());
        if (!offer(null, new MarkNode(marker))) {
            marker.retire(); // refused by a closing stream: its last commands may still run, the caller orders on the host
            return null;
        }
        return marker;
    }

    @Override
    protected void onClosed() {
        device.forget(this);
    }

    /** Enqueues everything waiting (up to MAX_IN_FLIGHT), flushes, then completes the oldest command. */
    @Override
    protected boolean work() {
        boolean enqueued = false;
        CommandQueue.Node node;
        while (inFlight.size() < MAX_IN_FLIGHT && (node = poll()) != null) {
            InFlight f = new InFlight(node.command(), node.callback());
            node.release();
            if (f.callback instanceof MarkNode mark) {
                enqueueMarker(f); // nothing to run: an event at the queue's end
                mark.marker().arm(f.failure == null ? f.tail() : null);
            } else {
                if (f.callback instanceof AfterMarkers waits) {
                    waitFor(f, waits);
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
        if (oldest == null) {
            return false;
        }
        complete(oldest);
        return true;
    }

    @Override
    protected void tearDown() {
        try {
            CL.clFinish(queue);
            guards.releaseAll();
            CL.clReleaseCommandQueue(queue);
        } catch (CLException e) {
            log.warn("releasing the command queue of {} failed: {}", this, ClInfo.errorName(e.getStatus()));
        }
    }

    /** A barrier on each marker the command waits for, ahead of it in this queue. */
    private void waitFor(InFlight f, AfterMarkers waits) {
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
        complete(f.command, f.callback, nanos, f.failure);
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

}
