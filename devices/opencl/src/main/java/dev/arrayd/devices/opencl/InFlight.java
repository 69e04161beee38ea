package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import org.jocl.CL;
import org.jocl.cl_event;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One command between its enqueue and its callback, owned by its stream's worker. It keeps the
 * first and the last OpenCL event of what was enqueued for it (a command may take several enqueues:
 * chunks of a large transfer, a fill's unaligned ends, an IR kernel and the read of its guard record),
 * host staging memory the driver may still be reading or writing, and a failure found while
 * enqueuing, reported in turn like any completion.
 */
final class InFlight {

    final DeviceCommand command;
    final CommandCallback callback;
    final long enqueuedNanos = System.nanoTime();
    ArraydException failure;
    cl_event first;
    cl_event last;
    Arena staging;
    /** For a download into heap memory: where the staged bytes go once the read completed. */
    MemorySegment copyBackFrom;
    MemorySegment copyBackTo;
    /** For a launch of an IR kernel with guards: its guard record, read back after the kernel. */
    LaunchGuard guard;

    InFlight(DeviceCommand command, CommandCallback callback) {
        this.command = command;
        this.callback = callback;
    }

    /**
     * Records the event of an enqueue that succeeded (an event passed to a failed enqueue was never
     * made, and releasing it would be an error); intermediate ones are released once superseded.
     */
    void track(cl_event e) {
        if (first == null) {
            first = e;
        } else {
            if (last != null && last != first) {
                CL.clReleaseEvent(last);
            }
            last = e;
        }
    }

    /** The event to wait for: the last enqueued, or null when nothing was. */
    cl_event tail() {
        return last != null ? last : first;
    }

    /** Worker-thread memory: enqueue and completion both run on the stream's worker, so a confined arena does. */
    MemorySegment stage(long bytes) {
        if (staging == null) {
            staging = Arena.ofConfined();
        }
        return staging.allocate(Math.max(1, bytes), 64);
    }

    /** Releases the events and the staging memory; only after the tail event completed (or none exists). */
    void releaseNative() {
        if (last != null && last != first) {
            CL.clReleaseEvent(last);
        }
        if (first != null) {
            CL.clReleaseEvent(first);
        }
        first = null;
        last = null;
        if (staging != null) {
            staging.close();
            staging = null;
        }
    }
}
