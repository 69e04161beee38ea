package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.StreamMarker;
import org.jocl.CL;
import org.jocl.cl_command_queue;
import org.jocl.cl_event;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * An OpenCL stream's {@link StreamMarker}: the event of an OpenCL marker enqueued at the marking
 * queue's end, retained, which a queue of the same context waits for with
 * {@code clEnqueueBarrierWithWaitList} before its next command, with no host round trip.
 *
 * <p>The marking stream's worker arms it right after it enqueued the marker (the event exists only
 * then; a waiting worker blocks until it does, bounded), and retires it when the marker completed on
 * the host's view: the event is released then, and a wait enqueued later is skipped (there is nothing
 * left to wait for). Retiring and enqueueing a barrier are serialised on the marker, so a barrier never
 * names a released event. A marker whose enqueue failed is armed with no event: waiters do not wait.
 */
final class ClMarker implements StreamMarker {

    private final ClContext context;
    private final CompletableFuture<cl_event> armed = new CompletableFuture<>();
    private boolean retired; // guarded by this

    ClMarker(ClContext context) {
        this.context = context;
    }

    ClContext context() {
        return context;
    }

    /** Marking worker, after the enqueue: {@code tail} is the command's last event, or null if none was made. */
    void arm(cl_event tail) {
        if (tail != null) {
            CL.clRetainEvent(tail);
        }
        if (!armed.complete(tail) && tail != null) {
            CL.clReleaseEvent(tail); // retired (refused) before it was armed
        }
    }

    /** Waiting worker: makes {@code queue}'s next commands wait for the marked point, unless it is known done. */
    synchronized void enqueueWait(cl_command_queue queue, long timeoutNanos, String where) {
        if (retired) {
            return;
        }
        cl_event e = await(timeoutNanos, where);
        if (e != null) {
            CL.clEnqueueBarrierWithWaitList(queue, 1, new cl_event[] {e}, null);
        }
    }

    private cl_event await(long timeoutNanos, String where) {
        try {
            return armed.get(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw new ArraydException(ErrorCode.INTERNAL, "marker waited for on " + where + " failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new ArraydException(ErrorCode.DEADLINE_EXCEEDED, "marker waited for on " + where + ": not armed after "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms (expected: the marking stream to enqueue it)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ArraydException(ErrorCode.CANCELLED, "interrupted while waiting for a marker on " + where, e);
        }
    }

    /** Marking stream, once the host heard the marker complete (or the stream refused it): reached. */
    synchronized void retire() {
        if (retired) {
            return;
        }
        retired = true;
        if (!armed.complete(null)) {
            cl_event e = armed.join();
            if (e != null) {
                CL.clReleaseEvent(e);
            }
        }
    }

    /** Whether it was retired (the host heard it pass, or its stream refused it). */
    synchronized boolean retired() {
        return retired;
    }

    /** Retired, or its event (once armed) complete on the device; a command that made no event counts as done. */
    @Override
    public synchronized boolean isReached() {
        if (retired) {
            return true;
        }
        if (!armed.isDone()) {
            return false;
        }
        cl_event e = armed.join();
        if (e == null) {
            return true;
        }
        int[] status = new int[1];
        CL.clGetEventInfo(e, CL.CL_EVENT_COMMAND_EXECUTION_STATUS, org.jocl.Sizeof.cl_int, org.jocl.Pointer.to(status), null);
        return status[0] <= CL.CL_COMPLETE; // complete, or failed (negative)
    }

    @Override
    public String toString() {
        return "opencl marker of context " + context.index() + (isReached() ? " (reached)" : "");
    }
}
