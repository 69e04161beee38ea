package dev.arrayd.client;

import com.google.protobuf.ByteString;
import dev.arrayd.proto.v1.EventCompletion;
import io.grpc.Status;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The session's events that have not completed yet, and the batches in flight that hold them.
 *
 * <p>An event is registered when its command is enqueued and removed when it completes, fails, is
 * rejected with its batch, or the session stream fails ({@link #terminate}). A batch stays in the table
 * until each of its events has left it, so a {@code BatchRejected} can name exactly its events. Thread-safe.
 */
final class EventTable {

    /** One event that has not completed. */
    static final class Pending {
        final long id;
        final CompletableFuture<EventResult> future;
        /** The batch that carried the command; set by the draining thread before the batch is sent. */
        volatile InflightBatch batch;
        /** The pieces of a download's data received so far (the stream's observer thread only). */
        ByteString pieces;

        Pending(long id, EventTable table) {
            this.id = id;
            this.future = new EventFuture(this, table);
        }
    }

    /**
     * A command's future. The outbox may hold a command back for others to join its batch
     * ({@link CommandOutbox}); a thread that blocks on the future of one not sent yet has it sent first.
     */
    private static final class EventFuture extends CompletableFuture<EventResult> {
        private final Pending pending;
        private final EventTable table;

        EventFuture(Pending pending, EventTable table) {
            this.pending = pending;
            this.table = table;
        }

        @Override
        public EventResult get() throws InterruptedException, ExecutionException {
            beforeBlocking();
            return super.get();
        }

        @Override
        public EventResult get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException,
                TimeoutException {
            beforeBlocking();
            return super.get(timeout, unit);
        }

        @Override
        public EventResult join() {
            beforeBlocking();
            return super.join();
        }

        private void beforeBlocking() {
            if (pending.batch == null && !isDone()) {
                table.blockedUnsent.run();
            }
        }
    }

    /** A sent batch whose events have not all left the table. */
    static final class InflightBatch {
        final long id;
        final long[] events;
        final AtomicInteger remaining;

        InflightBatch(long id, long[] events) {
            this.id = id;
            this.events = events;
            this.remaining = new AtomicInteger(events.length);
        }
    }

    private final ConcurrentHashMap<Long, Pending> pending = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, InflightBatch> batches = new ConcurrentHashMap<>();
    private volatile Status terminal;
    /** Sends what is queued: run when a thread blocks on the future of a command not sent yet. */
    private volatile Runnable blockedUnsent = () -> { };

    /** What to run when a thread blocks on the future of a command not sent yet (the outbox's drain). */
    void onBlockedUnsent(Runnable drain) {
        blockedUnsent = drain;
    }

    /** Registers event {@code id}; fails it at once if the table was terminated. */
    Pending register(long id) {
        Pending p = new Pending(id, this);
        pending.put(id, p);
        Status t = terminal;
        if (t != null) {
            fail(id, t);
        }
        return p;
    }

    /** Records that {@code events} travel in batch {@code batchId}; call before sending it. */
    void sending(long batchId, List<Pending> events) {
        long[] ids = new long[events.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = events.get(i).id;
        }
        InflightBatch b = new InflightBatch(batchId, ids);
        batches.put(batchId, b);
        for (Pending p : events) {
            p.batch = b;
        }
    }

    /** Applies a completion from the daemon; pending and unknown states are ignored. */
    void apply(EventCompletion c) {
        switch (c.getState()) {
            case EVENT_STATE_SUCCEEDED -> {
                Pending p = pending.get(c.getEvent());
                if (c.getMoreData() || (p != null && p.pieces != null)) {
                    // a download's data in pieces: collect them, complete with the last
                    if (p == null) {
                        return;
                    }
                    p.pieces = p.pieces == null ? c.getData() : p.pieces.concat(c.getData());
                    if (c.getMoreData()) {
                        return;
                    }
                    c = c.toBuilder().setData(p.pieces).setDataOffset(0).build();
                }
                complete(c.getEvent(), Protos.result(c));
            }
            case EVENT_STATE_FAILED -> fail(c.getEvent(), Protos.status(c.getCode(), c.getMessage()));
            default -> { }
        }
    }

    /** A command that succeeded with no data (a packed success), after {@code deviceNanos} on its device. */
    void succeeded(long id, long deviceNanos) {
        complete(id, new EventResult(id, EventState.SUCCEEDED, 0, "", deviceNanos < 0 ? Long.MAX_VALUE : deviceNanos,
                null));
    }

    void complete(long id, EventResult result) {
        Pending p = pending.remove(id);
        if (p != null) {
            left(p);
            p.future.complete(result);
        }
    }

    void fail(long id, Status status) {
        Pending p = pending.remove(id);
        if (p != null) {
            left(p);
            p.future.completeExceptionally(new ArraydCommandException(id, status));
        }
    }

    /** Fails every event of batch {@code batchId} that is still pending. */
    void rejected(long batchId, Status status) {
        InflightBatch b = batches.remove(batchId);
        if (b == null) {
            return;
        }
        for (long id : b.events) {
            Pending p = pending.remove(id);
            if (p != null) {
                p.future.completeExceptionally(new ArraydCommandException(id, status));
            }
        }
    }

    /** Fails every pending event, and every one registered later, with {@code status}. First call wins. */
    void terminate(Status status) {
        if (terminal == null) {
            terminal = status;
        }
        Status t = terminal;
        for (Long id : pending.keySet()) {
            fail(id, t);
        }
    }

    int pendingCount() {
        return pending.size();
    }

    int inflightBatchCount() {
        return batches.size();
    }

    private void left(Pending p) {
        InflightBatch b = p.batch;
        if (b != null) {
            leave(b);
        }
    }

    private void leave(InflightBatch b) {
        if (b.remaining.decrementAndGet() == 0) {
            batches.remove(b.id, b);
        }
    }
}
