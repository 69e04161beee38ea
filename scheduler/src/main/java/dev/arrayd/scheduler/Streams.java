package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Streams of sessions: a created stream owns a native stream of its device; a session's default stream
 * on a device ({@link Session#defaultStream}) shares the device's. A destroyed stream's native stream is
 * closed, on the {@code arrayd-housekeeping} thread, once its last command is done.
 */
final class Streams {

    private final SchedulerContext ctx;
    private final BufferLifecycle buffers;
    // closes native streams: closing joins a stream's worker, which may be the thread completing its last command
    private final ExecutorService housekeeping = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "arrayd-housekeeping");
        t.setDaemon(true);
        return t;
    });

    Streams(SchedulerContext ctx, BufferLifecycle buffers) {
        this.ctx = ctx;
        this.buffers = buffers;
    }

    /** A new stream with its own native stream on {@code device} (empty = the first device). */
    Stream create(Session s, String device) {
        ctx.checkSession(s);
        DeviceRuntime d = ctx.device(device);
        Stream st = new Stream(Handles.next(), d, d.device().newStream(d.id() + "-" + s.clientName()), true);
        s.streams.put(st.handle(), st);
        return st;
    }

    /** Forgets the stream now; its native stream closes once its pending work completes. */
    void destroy(Session s, long handle) {
        Stream st = s.streams.remove(handle);
        if (st == null) {
            throw ArraydException.notFound("stream " + Handles.format(handle) + " (not found in this session)");
        }
        Event tail;
        ctx.lockSubmit();
        try {
            st.destroyed = true;
            tail = st.tail;
            buffers.dropMerge(st);
            buffers.dropInstances(st);
        } finally {
            ctx.unlockSubmit();
        }
        tail.onDone(e -> housekeeping.execute(() -> st.nativeStream().close()));
    }

    /** A stream by handle, or the session's default stream on {@code device} when the handle is 0. */
    Stream stream(Session s, long handle, String device) {
        if (handle != 0) {
            return s.stream(handle, "");
        }
        return s.defaultStream(ctx.device(device));
    }

    /** Frees what the session's default streams hold (merge buffers, per-stream instances): the session closed. */
    void releaseDefaults(Session s) {
        ctx.lockSubmit();
        try {
            for (Stream st : s.defaultStreams.values()) {
                buffers.dropMerge(st);
                buffers.dropInstances(st);
            }
        } finally {
            ctx.unlockSubmit();
        }
    }

    /** Waits up to {@code deadlineNanos} (on System.nanoTime) for native streams being closed. */
    void close(long deadlineNanos) {
        housekeeping.shutdown();
        try {
            housekeeping.awaitTermination(Math.max(1, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
