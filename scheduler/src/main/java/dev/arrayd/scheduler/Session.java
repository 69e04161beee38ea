package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DeviceId;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A client's namespace (OCANNL's context): its buffers, kernels, streams and events. Every
 * handle is looked up here, so another session's handle is simply NOT_FOUND.
 */
public final class Session {

    private final String token;
    private final String clientName;
    private final long createdNanos;
    final EventTable events = new EventTable();
    final Map<Long, Buffer> buffers = new ConcurrentHashMap<>();
    final Map<Long, CompiledKernel> kernels = new ConcurrentHashMap<>();
    final Map<Long, Stream> streams = new ConcurrentHashMap<>();
    final Map<DeviceId, Stream> defaultStreams = new ConcurrentHashMap<>();
    private final java.util.List<Runnable> closeListeners = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile long leaseMillis;
    volatile boolean closed;
    // set once by Scheduler.openSession, before the session is visible to anyone
    CommandObserver observer = CommandObserver.NONE;

    Session(String token, String clientName, long createdNanos, long leaseMillis) {
        this.token = token;
        this.clientName = clientName;
        this.createdNanos = createdNanos;
        this.leaseMillis = leaseMillis;
    }

    /** The lease granted to this session. (Reclaiming sessions whose lease ran out is not done yet.) */
    public long leaseMillis() {
        return leaseMillis;
    }

    /** Runs {@code listener} when the session closes (at once if it already has). Must be fast. */
    public void onClose(Runnable listener) {
        closeListeners.add(listener);
        if (closed && closeListeners.remove(listener)) {
            listener.run();
        }
    }

    void fireClosed() {
        for (Runnable r : closeListeners) {
            if (closeListeners.remove(r)) {
                r.run();
            }
        }
    }

    /** The session's unguessable token. */
    public String token() {
        return token;
    }

    public String clientName() {
        return clientName;
    }

    public long createdNanos() {
        return createdNanos;
    }

    public boolean isClosed() {
        return closed;
    }

    public int bufferCount() {
        return buffers.size();
    }

    public int pendingEvents() {
        return events.pendingCount();
    }

    public Collection<Buffer> buffers() {
        return buffers.values();
    }

    Buffer buffer(long handle, String what) {
        Buffer b = buffers.get(handle);
        if (b == null) {
            throw ArraydException.notFound((what.isEmpty() ? "" : what + ": ") + "buffer " + Handles.format(handle)
                    + " (not found in this session)");
        }
        return b;
    }

    CompiledKernel kernel(long handle, String what) {
        CompiledKernel k = kernels.get(handle);
        if (k == null) {
            throw ArraydException.notFound((what.isEmpty() ? "" : what + ": ") + "kernel " + Handles.format(handle)
                    + " (not found in this session)");
        }
        return k;
    }

    Stream stream(long handle, String what) {
        Stream s = streams.get(handle);
        if (s == null) {
            throw ArraydException.notFound((what.isEmpty() ? "" : what + ": ") + "stream " + Handles.format(handle)
                    + " (not found in this session)");
        }
        return s;
    }

    void settled(Event e) {
        events.settled(e);
    }

    @Override
    public String toString() {
        return "session " + token.substring(0, 8) + "… (" + clientName + ")";
    }
}
