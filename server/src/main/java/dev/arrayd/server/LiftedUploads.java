package dev.arrayd.server;

import dev.arrayd.scheduler.CommandSpec;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The upload data of one session-stream request, left in the transport's receive buffers instead of being
 * copied out when the request was parsed ({@link UploadSkeleton}): each upload command copies its bytes from
 * there straight into device memory. The buffers belong to the detached message ({@code held}) and go back to
 * the transport once every command that reads them is done: one reference for the request while it is
 * decoded, one per submitted command ({@link #retain}, given back when its event completes).
 *
 * <p>The parser hands the request's lifted data to the stream's handler through the thread that runs both
 * (gRPC parses a message and delivers it on one thread, one after the other): {@link #offer} and {@link #take}.
 * Data offered for a message that never reached the handler is given back at the next offer on that thread.
 */
final class LiftedUploads {

    private static final ThreadLocal<Offered> OFFERED = new ThreadLocal<>();
    /** Lifted bytes whose buffers this process holds now, and lifted bytes in all (all servers of the process). */
    private static final AtomicLong HELD = new AtomicLong();
    private static final AtomicLong LIFTED = new AtomicLong();

    private record Offered(Object message, LiftedUploads uploads) {}

    private final InputStream held;
    private final Map<Integer, List<MemorySegment>> data;
    private final AtomicInteger refs = new AtomicInteger(1);
    private final long bytes;

    LiftedUploads(InputStream held, Map<Integer, List<MemorySegment>> data) {
        this.held = held;
        this.data = data;
        long n = 0;
        for (List<MemorySegment> pieces : data.values()) {
            n += CommandSpec.ScatteredUploadOp.sizeOf(pieces);
        }
        bytes = n;
        HELD.addAndGet(n);
        LIFTED.addAndGet(n);
    }

    /** Lifted upload bytes whose receive buffers are still held, in this process. */
    static long heldBytes() {
        return HELD.get();
    }

    /** Upload bytes lifted in all, in this process. */
    static long liftedBytes() {
        return LIFTED.get();
    }

    /** The pieces of {@code batch.commands[index].upload.data}, in order, or null when it was not lifted. */
    List<MemorySegment> data(int index) {
        return data.get(index);
    }

    /** Another reader of the data: a command submitted with it. */
    void retain() {
        if (refs.getAndIncrement() <= 0) {
            throw new IllegalStateException("lifted upload data retained after it was given back");
        }
    }

    /** A reader is done; the last one gives the buffers back to the transport. */
    void release() {
        int left = refs.decrementAndGet();
        if (left < 0) {
            throw new IllegalStateException("lifted upload data given back more often than it was retained");
        }
        if (left == 0) {
            HELD.addAndGet(-bytes);
            try {
                held.close();
            } catch (IOException e) {
                throw new IllegalStateException("giving back a request's receive buffers", e);
            }
        }
    }

    /** Hands {@code uploads}, lifted from {@code message}, to this thread's next {@link #take}. */
    static void offer(Object message, LiftedUploads uploads) {
        Offered stale = OFFERED.get();
        OFFERED.set(new Offered(message, uploads));
        if (stale != null) {
            stale.uploads.release(); // its message was dropped before it reached a handler
        }
    }

    /** The data lifted from {@code message} (this very object), or null; the caller then holds its reference. */
    static LiftedUploads take(Object message) {
        Offered o = OFFERED.get();
        if (o == null || o.message != message) {
            return null;
        }
        OFFERED.remove();
        return o.uploads;
    }
}
