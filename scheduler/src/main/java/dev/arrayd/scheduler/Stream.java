package dev.arrayd.scheduler;

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
    // guarded by Scheduler.submitLock; volatile for readers outside it
    volatile Event tail = Event.SUCCEEDED;
    boolean destroyed;
    // the merge buffer (OCANNL's): what the last merge copy on this stream filled; guarded by Scheduler.submitLock
    Buffer merge;
    // true when `merge` is the source buffer itself (a streaming merge read in place), not this stream's own
    boolean mergeInPlace;
    // instances of per-stream buffers made for this stream, freed with it; guarded by Scheduler.submitLock
    java.util.List<Buffer> instances;
    // this session's flow per priority class in its device's queue; guarded by that DeviceQueue
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
