package dev.arrayd.scheduler;

import dev.arrayd.devices.api.support.GuardedBy;
import dev.arrayd.devices.api.NativeStream;

/**
 * An in-order command queue of one session on one device. Order is kept by the scheduler (each
 * command waits for the one before it on the stream), so several streams may share a native
 * stream: the sessions' default streams do.
 */
public final class Stream {

    private final long handle;
    private final DeviceRuntime device;
    private final NativeStream nativeStream;
    private final boolean ownsNative;
    /** The event of the last command submitted to it; written under the lock, volatile for readers outside it. */
    @GuardedBy("SchedulerContext.submitLock")
    volatile Event tail = Event.SUCCEEDED;
    @GuardedBy("SchedulerContext.submitLock")
    boolean destroyed;
    /** The merge buffer (OCANNL's): what the last merge copy on this stream filled. */
    @GuardedBy("SchedulerContext.submitLock")
    Buffer merge;
    /** True when {@link #merge} is the source buffer itself (a streaming merge read in place), not this stream's own. */
    @GuardedBy("SchedulerContext.submitLock")
    boolean mergeInPlace;
    /** Instances of per-stream buffers made for this stream, freed with it. */
    @GuardedBy("SchedulerContext.submitLock")
    java.util.List<Buffer> instances;
    /** This session's flow per priority class in its device's queue. */
    @GuardedBy("DeviceQueue.this (of this stream's device)")
    final Flow[] flows = new Flow[Priority.values().length];

    Stream(long handle, DeviceRuntime device, NativeStream nativeStream, boolean ownsNative) {
        this.handle = handle;
        this.device = device;
        this.nativeStream = nativeStream;
        this.ownsNative = ownsNative;
    }

    /** 0 for a session's default stream. */
    public long handle() {
        return handle;
    }

    public DeviceRuntime device() {
        return device;
    }

    /** OCANNL's {@code all_work}: the event of the last command submitted to this stream. */
    public Event allWork() {
        return tail;
    }

    /** Whether everything submitted so far has completed. */
    public boolean isIdle() {
        return tail.isDone();
    }

    NativeStream nativeStream() {
        return nativeStream;
    }

    boolean ownsNative() {
        return ownsNative;
    }

    /** Dedicated when it owns its native stream, shared otherwise. */
    public StreamKind kind() {
        return ownsNative ? StreamKind.DEDICATED : StreamKind.SHARED;
    }

    @Override
    public String toString() {
        return (handle == 0 ? "default stream" : "stream " + Handles.format(handle)) + " on " + device.id();
    }
}
