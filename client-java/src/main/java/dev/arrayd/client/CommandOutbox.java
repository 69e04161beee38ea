package dev.arrayd.client;

import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CommandBatch;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.Ping;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongFunction;

/**
 * The session's send side: sequences commands and ordered calls, batches commands, and is the only
 * caller of the session stream's {@code onNext} (which is not thread-safe).
 *
 * <pre>
 *  producers (any thread)                        the draining thread (whoever wins the flag)
 *  seq = ++lastSeq  ─┐
 *  build entry(seq)  ├─> queue (lock-free) ──> reorder by seq ──> CommandBatch ≤ 512 cmds / ~1 MiB ─> onNext
 *  offer; drain()   ─┘                        (holdback heap)  └─> ordered call: flush batch, start call
 * </pre>
 *
 * <p>Every entry takes a sequence number (its place in the send order); commands also take an event id
 * from a separate dense counter, so ordered calls leave no gaps between the ids the daemon sees. Two
 * producers may offer out of order; the drainer holds an early entry back until the one before it
 * arrives (its producer then drains). A producer never
 * waits: if another thread is draining, it leaves its entry in the queue; the drainer re-checks the queue
 * after releasing the flag, so no entry is stranded.
 *
 * <p><b>Coalescing.</b> A launch submitted alone while {@value #COALESCE_IN_FLIGHT} or more commands are in flight
 * (sent, not completed) is not sent at once unless a quarter as many are queued: it would queue behind those on
 * the daemon anyway, and a message per command each way is what limits a pipelined loop. A timer drains at most
 * {@link #COALESCE_NANOS} later, and a thread that blocks on the future of a command not sent yet drains at once
 * ({@link EventTable.Pending}). Other commands (a read's downloads, whose results come through derived futures),
 * explicit batches ({@link #submitAll}), replays and ordered calls go at once, with whatever is queued before them.
 */
final class CommandOutbox {

    static final int MAX_BATCH_COMMANDS = 512;
    /**
     * A batch is cut before its commands' bytes pass this, counting an inline download as the bytes it names (a read's
     * chunks do): the daemon holds a batch's downloads in its memory from the moment it reads the batch, and reads no
     * more of the stream while the session holds 64 MiB of them, so a read of many chunks goes in many batches, read
     * as the earlier chunks' data is sent.
     */
    static final int MAX_BATCH_BYTES = 1 << 20;
    private static final long MAX_INLINE_DOWNLOAD = 16 << 20;
    /** Commands in flight from which a lone command may wait for others to join its batch. */
    static final int COALESCE_IN_FLIGHT = 64;
    /** The longest a command waits to be sent for others to join its batch. */
    static final long COALESCE_NANOS = 200_000;

    /** A call that must reach the daemon after the commands enqueued before it. */
    interface OrderedCall {
        /** Starts the call; runs on the draining thread. Must not throw. */
        void start();

        /** The call will not be started: fail its result with {@code status}. */
        void fail(Status status);
    }

    private abstract static sealed class Entry permits CommandEntry, CallEntry, ReplayEntry {
        final long seq;

        Entry(long seq) {
            this.seq = seq;
        }
    }

    private static final class CommandEntry extends Entry {
        final Command command;
        final EventTable.Pending event;

        CommandEntry(long seq, Command command, EventTable.Pending event) {
            super(seq);
            this.command = command;
            this.event = event;
        }
    }

    /** A graph replay: one message, a block of consecutive event ids. */
    private static final class ReplayEntry extends Entry {
        final dev.arrayd.proto.v1.ReplayGraphRequest.Builder request;
        final List<EventTable.Pending> events;

        ReplayEntry(long seq, dev.arrayd.proto.v1.ReplayGraphRequest.Builder request, List<EventTable.Pending> events) {
            super(seq);
            this.request = request;
            this.events = events;
        }
    }

    private static final class CallEntry extends Entry {
        final OrderedCall call;

        CallEntry(long seq, OrderedCall call) {
            super(seq);
            this.call = call;
        }
    }

    private final Consumer<ExecuteRequest> wire;
    private final EventTable events;
    /** Runs the coalescing timer's drain; null: every command is sent at once. */
    private final ScheduledExecutorService timer;
    /** Commands queued and not yet taken into a batch. */
    private final AtomicInteger unsent = new AtomicInteger();
    /** Whether a timer's drain is scheduled. */
    private final AtomicBoolean flushArmed = new AtomicBoolean();

    /** Send order of every entry, commands and ordered calls alike. */
    private final AtomicLong lastSeq = new AtomicLong();
    /**
     * Event ids, taken by commands only: kept dense (1, 2, 3, ...) because the daemon stores the ids a
     * session used as ranges and bounds how many gaps it will hold.
     */
    private final AtomicLong lastEventId = new AtomicLong();
    private final Object numbering = new Object();
    private final ConcurrentLinkedQueue<Entry> queue = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean draining = new AtomicBoolean();
    /** Nonce of the ping to send next; 0 = none. */
    private final AtomicLong pingNonce = new AtomicLong();
    private final AtomicLong pingCounter = new AtomicLong();
    private final AtomicLong batchesSent = new AtomicLong();
    /** Once set, entries are failed with it instead of sent. */
    private volatile Status terminal;

    // Touched only by the thread holding `draining`.
    private final PriorityQueue<Entry> holdback = new PriorityQueue<>(Comparator.comparingLong(e -> e.seq));
    private long nextSeq = 1;
    private long nextBatchId = 1;

    /** An outbox that sends every command at once. */
    CommandOutbox(Consumer<ExecuteRequest> wire, EventTable events) {
        this(wire, events, null);
    }

    /** @param timer runs the drain of commands held for others to join their batch (null: none are held) */
    CommandOutbox(Consumer<ExecuteRequest> wire, EventTable events, ScheduledExecutorService timer) {
        this.wire = wire;
        this.events = events;
        this.timer = timer;
        events.onBlockedUnsent(this::drain);
    }

    /**
     * Enqueues a command: assigns its event id, registers the event and drains, unless it is a launch that may
     * wait for others to join its batch (see the class doc). Never throws.
     */
    EventTable.Pending submit(Command.Builder command) {
        boolean launch = command.getKindCase() == Command.KindCase.LAUNCH;
        EventTable.Pending p = enqueue(command);
        if (!launch || !holdForMore()) {
            drain();
        }
        return p;
    }

    /** Whether the commands queued may wait for more (many others in flight); if so, a timer drains them. */
    private boolean holdForMore() {
        ScheduledExecutorService t = timer;
        if (t == null || terminal != null) {
            return false;
        }
        int queued = unsent.get();
        int inFlight = events.pendingCount() - queued;
        if (inFlight < COALESCE_IN_FLIGHT || queued >= inFlight / 4) {
            return false;
        }
        if (flushArmed.compareAndSet(false, true)) {
            try {
                t.schedule(() -> {
                    flushArmed.set(false);
                    drain();
                }, COALESCE_NANOS, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                flushArmed.set(false);
                return false; // the client is closing
            }
        }
        return true;
    }

    /**
     * Takes a send position and an event id together, so that ids also increase in send order (the
     * daemon then sees 1, 2, 3, ...: one range in its table of used ids).
     */
    private EventTable.Pending enqueue(Command.Builder command) {
        long seq;
        long id;
        synchronized (numbering) {
            seq = lastSeq.incrementAndGet();
            id = lastEventId.incrementAndGet();
        }
        EventTable.Pending p = events.register(id);
        unsent.incrementAndGet();
        queue.offer(new CommandEntry(seq, command.setEvent(id).build(), p));
        return p;
    }

    /**
     * Enqueues commands in order (increasing event ids) and drains once, so that a lone caller's commands
     * leave together in one batch (within the batch limits). Never throws.
     */
    List<EventTable.Pending> submitAll(List<Command.Builder> commands) {
        List<EventTable.Pending> out = new ArrayList<>(commands.size());
        for (Command.Builder command : commands) {
            out.add(enqueue(command));
        }
        drain();
        return out;
    }

    /**
     * Enqueues a graph replay of {@code commands} commands: they take the next {@code commands} event ids
     * (the request's first_event is set here). Never throws.
     */
    List<EventTable.Pending> replay(dev.arrayd.proto.v1.ReplayGraphRequest.Builder request, int commands) {
        long seq;
        long first;
        synchronized (numbering) {
            seq = lastSeq.incrementAndGet();
            first = lastEventId.get() + 1;
            lastEventId.addAndGet(commands);
        }
        List<EventTable.Pending> out = new ArrayList<>(commands);
        for (int i = 0; i < commands; i++) {
            out.add(events.register(first + i));
        }
        queue.offer(new ReplayEntry(seq, request.setFirstEvent(first), out));
        drain();
        return out;
    }

    /**
     * Enqueues a call behind the commands enqueued so far. {@code factory} gets the call's sequence number
     * (its place in the send order, not an event id) and must not throw.
     */
    void submitCall(LongFunction<OrderedCall> factory) {
        long seq;
        synchronized (numbering) {
            seq = lastSeq.incrementAndGet();
        }
        queue.offer(new CallEntry(seq, factory.apply(seq)));
        drain();
    }

    /** Asks for a ping to be sent with the next drain. */
    void ping() {
        pingNonce.set(pingCounter.incrementAndGet());
        drain();
    }

    /** From now on, fails entries with {@code status} instead of sending them. First call wins. */
    void terminate(Status status) {
        if (terminal == null) {
            terminal = status;
        }
        drain();
    }

    long batchesSent() {
        return batchesSent.get();
    }

    void drain() {
        do {
            if (!draining.compareAndSet(false, true)) {
                return;
            }
            try {
                drainHoldingFlag();
            } finally {
                draining.set(false);
            }
        } while (!queue.isEmpty() || pingNonce.get() != 0);
    }

    private void drainHoldingFlag() {
        long nonce = pingNonce.getAndSet(0);
        if (nonce != 0 && terminal == null) {
            send(ExecuteRequest.newBuilder().setPing(Ping.newBuilder().setNonce(nonce)).build(), List.of());
        }
        CommandBatch.Builder batch = null;
        List<EventTable.Pending> batchEvents = null;
        int batchBytes = 0;
        Entry e;
        while ((e = nextInOrder()) != null) {
            if (e instanceof CommandEntry) {
                unsent.decrementAndGet();
            }
            Status t = terminal;
            if (t != null) {
                fail(e, t);
                continue;
            }
            if (e instanceof CommandEntry c) {
                int size = c.command.getSerializedSize() + 8 + inlineDownloadBytes(c.command);
                if (batch != null
                        && (batchEvents.size() == MAX_BATCH_COMMANDS || batchBytes + size > MAX_BATCH_BYTES)) {
                    sendBatch(batch, batchEvents);
                    batch = null;
                }
                if (batch == null) {
                    batch = CommandBatch.newBuilder();
                    batchEvents = new ArrayList<>();
                    batchBytes = 0;
                }
                batch.addCommands(c.command);
                batchEvents.add(c.event);
                batchBytes += size;
            } else if (e instanceof ReplayEntry r) {
                if (batch != null) {
                    sendBatch(batch, batchEvents);
                    batch = null;
                }
                long batchId = nextBatchId++;
                events.sending(batchId, r.events);
                send(ExecuteRequest.newBuilder().setReplay(r.request.setBatchId(batchId)).build(), r.events);
            } else if (e instanceof CallEntry call) {
                if (batch != null) {
                    sendBatch(batch, batchEvents);
                    batch = null;
                }
                try {
                    call.call.start();
                } catch (RuntimeException ex) {
                    call.call.fail(Status.INTERNAL.withDescription("starting an ordered call failed").withCause(ex));
                }
            }
        }
        if (batch != null) {
            sendBatch(batch, batchEvents);
        }
    }

    private Entry nextInOrder() {
        Entry head = holdback.peek();
        if (head != null && head.seq == nextSeq) {
            nextSeq++;
            return holdback.poll();
        }
        Entry e;
        while ((e = queue.poll()) != null) {
            if (e.seq == nextSeq) {
                nextSeq++;
                return e;
            }
            holdback.add(e);
        }
        return null;
    }

    private void sendBatch(CommandBatch.Builder batch, List<EventTable.Pending> batchEvents) {
        long batchId = nextBatchId++;
        events.sending(batchId, batchEvents);
        ExecuteRequest request = ExecuteRequest.newBuilder().setBatch(batch.setBatchId(batchId)).build();
        batchesSent.incrementAndGet();
        send(request, batchEvents);
    }

    private void send(ExecuteRequest request, List<EventTable.Pending> carried) {
        try {
            wire.accept(request);
        } catch (RuntimeException ex) {
            Status s = Status.INTERNAL.withDescription("sending on the session stream failed: " + ex).withCause(ex);
            for (EventTable.Pending p : carried) {
                events.fail(p.id, s);
            }
        }
    }

    private void fail(Entry e, Status status) {
        if (e instanceof ReplayEntry r) {
            for (EventTable.Pending p : r.events) {
                events.fail(p.id, status);
            }
        } else if (e instanceof CommandEntry c) {
            events.fail(c.event.id, status);
        } else if (e instanceof CallEntry call) {
            call.call.fail(status);
        }
    }

    /** The bytes an inline download (no region) names, for cutting batches; 0 for other commands. */
    static int inlineDownloadBytes(Command c) {
        if (!c.hasDownload() || c.getDownload().hasIntoRegion()) {
            return 0;
        }
        long size = c.getDownload().getSizeBytes(); // (0: to the end, at most the daemon's largest inline download)
        return (int) (size < 0 || size > MAX_INLINE_DOWNLOAD ? MAX_INLINE_DOWNLOAD : size);
    }
}
