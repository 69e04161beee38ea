package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import com.google.protobuf.UnsafeByteOperations;
import dev.arrayd.proto.v1.Attached;
import dev.arrayd.proto.v1.BatchRejected;
import dev.arrayd.proto.v1.CommandBatch;
import dev.arrayd.proto.v1.EventCompletion;
import dev.arrayd.proto.v1.Completions;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.ExecuteResponse;
import dev.arrayd.scheduler.CommandSpec;
import dev.arrayd.scheduler.Event;
import dev.arrayd.scheduler.EventListener;
import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.scheduler.Session;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One session stream ({@code ExecutionService.Execute}). Requests arrive on the transport thread
 * and are handled there without blocking: decode, submit to the scheduler, return. Completions
 * arrive on device threads; they are queued and sent by whichever thread finds the queue idle,
 * so completions that finish together leave in one message and {@code onNext} is never called
 * concurrently.
 *
 * <p><b>Backpressure.</b> The stream reads with manual flow control: one request message at a time,
 * and the next only while (a) fewer than {@code maxInFlight} of its commands are unanswered
 * (submitted, and their completion not yet handed to the transport), (b) the transport is ready
 * to send ({@code isReady}: the client reads what we send), (c) few control replies wait, and (d) its
 * inline transfers hold less than 64 MiB (or half the {@link TransferMemory}, if less). When
 * one of them fails the stream stops reading; gRPC's flow control then stops the client's writes
 * (its outbox grows on its side, not ours). Completions are only handed to the transport while it
 * is ready, so what the daemon holds per stream is bounded by {@code maxInFlight} completions plus
 * one transport window, however slowly the client reads. A batch whose inline transfers do not fit
 * what is left of the daemon's {@link TransferMemory} is refused whole (RESOURCE_EXHAUSTED): one
 * batch could otherwise carry thousands of downloads, whose data would all be in the heap at once.
 *
 * <p><b>Cancel.</b> A half-close finishes the stream after the completions of its commands; a cancel
 * (the client's, a deadline's or a broken connection's) cancels the session's pending commands (see
 * {@link #cancelPending}).
 */
final class SessionStreamHandler implements StreamObserver<ExecuteRequest>, EventListener {

    /** Most completions in one response message. */
    private static final int MAX_PER_MESSAGE = 1024;
    /** Largest response message, whatever the client accepts (a larger one only delays the first completion). */
    private static final int MAX_MESSAGE_BYTES = 8 << 20;
    /** Room left in every message for its envelope and gRPC's framing. */
    private static final int MESSAGE_MARGIN = 1024;
    /** Bytes of a completion beside its data: field tags and lengths, event, state, code, device time, offsets. */
    private static final int COMPLETION_OVERHEAD = 64;
    /** Bytes of a packed success at most: its event id and device nanoseconds, ten bytes of varint each. */
    private static final int PACKED_SUCCESS_BYTES = 20;
    /** The smallest piece a download's data is cut into at the end of a message (else it starts the next). */
    private static final int MIN_PIECE = 16 << 10;

    /** Bytes of transfer data this stream holds beyond which it stops reading (or half the transfer memory, if less). */
    private static final long MAX_HELD_DATA_BYTES = 64L << 20;
    /**
     * Bytes of this stream's inline transfers: uploads from their batch until their command is done, downloads from
     * their submission until their data is handed to the transport.
     */
    private final AtomicLong heldData = new AtomicLong();
    /** The bytes each of those transfers holds of {@link #memory}, by event id. */
    private final java.util.concurrent.ConcurrentHashMap<Long, Long> holds = new java.util.concurrent.ConcurrentHashMap<>();
    private final TransferMemory memory;

    /** Control replies (pongs, rejections) queued beyond which the stream stops reading. */
    private static final int MAX_CONTROL_QUEUED = 64;

    private final Scheduler scheduler;
    private final SessionRegistry sessions;
    private final Admission admission;
    private final CompletionLinger linger;
    /** Where downloads' arrays come from, and go back to once their last byte is sent. */
    private final DownloadArrays downloadArrays;
    /** Downloads whose last bytes the message being built carries (draining thread only). */
    private final ArrayList<Event> sentWhole = new ArrayList<>();
    /** How long completions may wait to leave together (Attach.completion_linger_us); 0 = not at all. */
    private volatile long lingerNanos;
    /** Whether successes without data go packed (Attach.packed_successes). */
    private volatile boolean packSuccesses;
    /** Whether the linger timer is armed for what this stream holds back. */
    private final java.util.concurrent.atomic.AtomicBoolean lingering = new java.util.concurrent.atomic.AtomicBoolean();
    private final int maxInFlight;
    private final ServerCallStreamObserver<ExecuteResponse> out;
    /** Commands submitted whose completion has not been handed to the transport yet. */
    private final AtomicLong unanswered = new AtomicLong();
    /** Whether a message has been requested and not delivered yet (at most one at a time). */
    private final java.util.concurrent.atomic.AtomicBoolean requested = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile SessionLease lease;
    /** Largest response message this stream's client accepts (set when it attaches). */
    private volatile long messageBytes = SessionLease.DEFAULT_RECEIVE_BYTES;
    /** The download whose data is being sent in pieces, and how much of it went (draining thread only). */
    private Event splitting;
    private long splitOffset;
    private final ConcurrentLinkedQueue<ExecuteResponse> control = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Event> completed = new ConcurrentLinkedQueue<>();
    private final AtomicInteger wip = new AtomicInteger();
    private final AtomicLong inFlight = new AtomicLong();
    private volatile Session session;
    private volatile Status terminal;      // set once: the stream ends with this error
    private volatile Status endStatus;     // how the stream ends once drained: null = OK
    private volatile boolean halfClosed;   // the client sent onCompleted; finish after in-flight work
    private volatile boolean cancelled;    // the client went away
    private volatile boolean serverEnded;  // we ended the call (status sent): a late cancel is not the client's
    private boolean closed;                // only the draining thread touches it

    SessionStreamHandler(Scheduler scheduler, SessionRegistry sessions, StreamObserver<ExecuteResponse> out,
            Admission admission, CompletionLinger linger, DownloadArrays downloadArrays, TransferMemory memory) {
        this.linger = linger;
        this.memory = memory;
        this.downloadArrays = downloadArrays;
        this.scheduler = scheduler;
        this.sessions = sessions;
        this.admission = admission;
        this.maxInFlight = admission.sessionMaxInFlight();
        this.out = (ServerCallStreamObserver<ExecuteResponse>) out;
        // the call's context: its deadline tells a cancel by the client from a deadline that ran out
        Context call = Context.current();
        // Without a handler, onNext after a client cancel throws; with one it is a no-op.
        this.out.setOnCancelHandler(() -> {
            cancelled = true;
            cancelPending(call); // before the stream stops counting as live (tests wait for that)
            ended();
        });
        this.out.disableAutoRequest();
        this.out.setOnReadyHandler(this::drain);
        requested.set(true);
        this.out.request(1);
    }

    /** Requests the next message if the stream may read (see the class comment); from any thread. */
    private void maybeRequest() {
        if (!requested.get() && !cancelled && terminal == null && unanswered.get() < maxInFlight
                && heldData.get() < Math.min(MAX_HELD_DATA_BYTES, memory.limit() / 2) && control.size() < MAX_CONTROL_QUEUED && out.isReady() && requested.compareAndSet(false, true)) {
            out.request(1);
        }
    }

    private final java.util.concurrent.atomic.AtomicBoolean ended = new java.util.concurrent.atomic.AtomicBoolean();

    /** The stream is over (client cancel, error or our end): it no longer keeps its session's lease. */
    private void ended() {
        SessionLease l = lease;
        if (l != null && ended.compareAndSet(false, true)) {
            l.liveStreams.decrementAndGet();
        }
    }

    /**
     * The call was cancelled (the client cancelled it, its deadline ran out, or its connection broke)
     * rather than ending with a half-close or a status of ours: nobody will read the results of the
     * session's pending work, so the session's queued commands are cancelled (CANCELLED, or
     * DEADLINE_EXCEEDED when the call's deadline ran out); running ones finish and their results are
     * dropped. The session itself stays open until CloseSession or its lease.
     */
    private void cancelPending(Context call) {
        Session s = session;
        if (s == null || serverEnded) {
            return;
        }
        Deadline d = call.getDeadline();
        ArraydException cause = d != null && d.isExpired()
                ? new ArraydException(ErrorCode.DEADLINE_EXCEEDED, "cancelled: the deadline of the session stream of "
                        + s + " ran out before this command finished")
                : new ArraydException(ErrorCode.CANCELLED, "cancelled: the session stream of " + s
                        + " was cancelled before this command finished (by the client, a broken connection, or a quota"
                        + " that ended the call): nobody reads its results");
        scheduler.cancelPending(s, cause);
    }

    /** The attached session, or null. */
    Session session() {
        return session;
    }

    @Override
    public void onNext(ExecuteRequest req) {
        LiftedUploads lifted = LiftedUploads.take(req); // (this stream's reference: given back below)
        try {
            receive(req, lifted);
        } finally {
            if (lifted != null) {
                lifted.release();
            }
        }
    }

    private void receive(ExecuteRequest req, LiftedUploads lifted) {
        requested.set(false);
        if (terminal != null || cancelled) {
            return;
        }
        SessionLease l = lease;
        if (l != null) {
            l.renewedNanos = sessions.clock().nanoTime(); // every message renews the lease
        }
        switch (req.getMsgCase()) {
            case ATTACH -> attach(req.getAttach());
            case BATCH -> batch(req.getBatch(), lifted);
            case REPLAY -> replay(req.getReplay());
            case PING -> send(ExecuteResponse.newBuilder().setPong(req.getPing()).build());
            case MSG_NOT_SET -> fail(Status.INVALID_ARGUMENT.withDescription(
                    "msg: unset (expected: attach, batch, replay or ping)"));
        }
        maybeRequest();
    }

    private void attach(dev.arrayd.proto.v1.Attach a) {
        String token = a.getSession();
        if (session != null) {
            fail(Status.FAILED_PRECONDITION.withDescription("attach: this stream is already attached to a session"));
            return;
        }
        SessionLease l;
        long limit;
        try {
            l = sessions.lease(token); // another tenant's token is NOT_FOUND, like an unknown one
            limit = a.getMaxReceiveMessageBytes() == 0 ? l.receiveBytes
                    : SessionLease.receiveBytes(a.getMaxReceiveMessageBytes(), "attach.max_receive_message_bytes");
        } catch (ArraydException e) {
            fail(StatusMapper.toStatus(e));
            return;
        }
        if (a.getCompletionLingerUs() > CompletionLinger.MAX_MICROS || a.getCompletionLingerUs() < 0) {
            fail(Status.INVALID_ARGUMENT.withDescription("attach.completion_linger_us: "
                    + Integer.toUnsignedString(a.getCompletionLingerUs()) + " (expected: 0 to "
                    + CompletionLinger.MAX_MICROS + ")"));
            return;
        }
        lingerNanos = a.getCompletionLingerUs() * 1_000L;
        packSuccesses = a.getPackedSuccesses();
        messageBytes = Math.min(limit, MAX_MESSAGE_BYTES);
        Session s = l.session;
        l.liveStreams.incrementAndGet();
        lease = l;
        if (cancelled) {
            ended();
        }
        session = s;
        // a closed session ends its stream, after the completions of what it had submitted: OK, or
        // UNAVAILABLE when a shutdown closed it
        s.onClose(this::sessionClosed);
        send(ExecuteResponse.newBuilder().setAttached(Attached.newBuilder().setSession(token)).build());
    }

    /** @param lifted the batch's upload data left in the request's receive buffers, or null */
    private void batch(CommandBatch batch, LiftedUploads lifted) {
        Session s = session;
        if (s == null) {
            fail(Status.FAILED_PRECONDITION.withDescription("batch: the stream is not attached (send attach first)"));
            return;
        }
        try {
            List<CommandSpec> specs = CommandDecoder.batch(batch.getCommandsList(), CommandDecoder.Call.STREAM,
                    scheduler.config().maxInlineBytes(), CommandSpec.NO_DEADLINE, lease.regions, downloadArrays,
                    lifted);
            long held = hold(specs);
            try {
                if (specs.size() == 1) {
                    CommandSpec only = specs.getFirst();
                    submitCounted(1, () -> keepUntilDone(lifted, only, scheduler.submit(s, only, this))); // (no list)
                } else {
                    submitCounted(specs.size(), () -> {
                        List<Event> events = scheduler.submit(s, specs, this);
                        for (int i = 0; lifted != null && i < specs.size(); i++) {
                            keepUntilDone(lifted, specs.get(i), events.get(i));
                        }
                    });
                }
            } catch (RuntimeException e) {
                if (held > 0) {
                    specs.forEach(spec -> release(spec.event())); // nothing of the batch was submitted
                }
                throw e;
            }
        } catch (RuntimeException e) {
            reject(batch.getBatchId(), e);
        }
    }

    /**
     * Keeps the lifted data ({@code lifted}, null: none) in the transport's buffers until {@code spec}'s command,
     * if it reads it, is done: its event completes once its device has copied the bytes, or once it failed or was
     * cancelled without reading them.
     */
    private static void keepUntilDone(LiftedUploads lifted, CommandSpec spec, Event event) {
        if (lifted != null && spec.op() instanceof CommandSpec.ScatteredUploadOp) {
            lifted.retain();
            event.onDone(e -> lifted.release());
        }
    }

    /**
     * Takes what the batch's inline transfers hold of the daemon's {@link TransferMemory} before they are submitted
     * (an upload its data, in the heap since the batch was read; a download its size, or the largest inline download
     * when it reads to the end); refuses the batch when they do not fit. Each is given back when its command is done
     * (an upload), its data has been handed to the transport or its command failed (a download), or the stream ended.
     * Returns the bytes taken.
     */
    private long hold(List<CommandSpec> specs) {
        long total = 0;
        for (CommandSpec spec : specs) {
            total += TransferMemory.heldBy(spec);
        }
        if (total == 0) {
            return 0;
        }
        memory.hold(total, "batch");
        heldData.addAndGet(total);
        for (CommandSpec spec : specs) {
            long bytes = TransferMemory.heldBy(spec);
            if (bytes > 0) {
                Long before = holds.put(spec.event(), bytes);
                if (before != null) { // (an id the batch repeats, or one still pending: its command is refused)
                    memory.release(before);
                    heldData.addAndGet(-before);
                }
            }
        }
        if (cancelled || closed) {
            releaseAll(); // (the stream ended meanwhile: its drain may have given back what it held already)
        }
        return total;
    }

    /** Gives back what the transfer of event {@code id} holds, if anything (once). */
    private void release(long id) {
        Long bytes = holds.remove(id);
        if (bytes != null) {
            memory.release(bytes);
            heldData.addAndGet(-bytes);
        }
    }

    /** Gives back everything this stream holds (it sends nothing more). */
    private void releaseAll() {
        for (Long id : holds.keySet()) {
            release(id);
        }
    }

    /**
     * Runs {@code submit} admitted for {@code n} commands ({@link Admission}: over the tenant's quota, the
     * submission is rejected), counted in this stream's in-flight and unanswered counts too; given back when
     * it throws.
     */
    private void submitCounted(int n, Runnable submit) {
        inFlight.addAndGet(n);
        unanswered.addAndGet(n);
        submitting = Thread.currentThread();
        try {
            admission.admit(lease, n, () -> {
                submit.run();
                return null;
            });
        } catch (RuntimeException e) {
            inFlight.addAndGet(-n);
            unanswered.addAndGet(-n);
            throw e;
        } finally {
            submitting = null;
            drain(); // what the batch completed inline leaves now, in one message
        }
    }

    /**
     * The transport thread while it submits a batch of this stream: commands that complete on it during the
     * submission (the fast path runs short ones inline) are answered together when it returns, in one message,
     * instead of one message each.
     */
    private volatile Thread submitting;

    /** A graph replay: like a batch of the graph's commands (rejected as a whole under its batch_id). */
    private void replay(dev.arrayd.proto.v1.ReplayGraphRequest r) {
        Session s = session;
        if (s == null) {
            fail(Status.FAILED_PRECONDITION.withDescription("replay: the stream is not attached (send attach first)"));
            return;
        }
        try {
            var replay = CommandDecoder.replay(r, false, CommandSpec.NO_DEADLINE);
            int n = scheduler.graph(s, r.getGraph()).size();
            submitCounted(n, () -> scheduler.replayGraph(s, r.getGraph(), replay, this));
        } catch (RuntimeException e) {
            reject(r.getBatchId(), e);
        }
    }

    /** Answers a refused batch or replay; an unexpected exception is mapped like a unary call's (and logged). */
    private void reject(long batchId, RuntimeException e) {
        if (e instanceof ArraydException a) {
            reject(batchId, a);
            return;
        }
        Status st = StatusMapper.toStatus(e);
        reject(batchId, new ArraydException(ErrorCode.valueOf(st.getCode().name()), st.getDescription(), e));
    }

    private void reject(long batchId, ArraydException e) {
        send(ExecuteResponse.newBuilder().setRejected(BatchRejected.newBuilder()
                .setBatchId(batchId).setCode(StatusMapper.codeValue(e)).setMessage(e.getMessage())).build());
    }

    /** An event of this stream's commands completed (device thread). */
    @Override
    public void onEvent(Event event) {
        lease.commandDone();
        if (!holds.isEmpty() || event.result() instanceof byte[]) {
            byte[] data = event.state() == dev.arrayd.scheduler.EventState.SUCCEEDED
                    && event.result() instanceof byte[] d ? d : null;
            if (data == null || data.length == 0) {
                release(event.id()); // no data of it will be sent
            } else if (!holds.containsKey(event.id())) {
                // a graph replay's download: its data exists already, and the stream stops reading until it is sent
                memory.holdAnyway(data.length);
                heldData.addAndGet(data.length);
                holds.put(event.id(), (long) data.length);
            }
        }
        completed.add(event);
        inFlight.decrementAndGet();
        if (submitting == Thread.currentThread()) {
            return; // completed inline by the batch being submitted: sent with the others when it returns
        }
        long l = lingerNanos;
        if (l > 0 && inFlight.get() > 0) {
            // others are in flight: this one waits (at most the linger) to leave with them
            if (lingering.compareAndSet(false, true)) {
                linger.after(l, this::lingerOver);
            }
            return;
        }
        drain();
    }

    /** Completions wait for the linger timer: it is armed and commands are still in flight. */
    private boolean holdingBack() {
        return lingering.get() && inFlight.get() > 0;
    }

    /**
     * The linger timer: sends what waited (a completion queued meanwhile armed it again, or is sent now). A
     * completion waits at most the linger: less when it arrives while the timer is armed for an earlier one.
     */
    private void lingerOver() {
        lingering.set(false);
        drain();
    }

    private void send(ExecuteResponse msg) {
        control.add(msg);
        drain();
    }

    private void fail(Status status) {
        terminal = status;
        drain();
    }

    /**
     * Sends what is queued. Only one thread at a time gets past the counter; others leave a
     * "missed" mark that makes it loop once more, so nothing queued is left behind.
     */
    private void drain() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            if (closed || cancelled) {
                control.clear();
                completed.clear();
                splitting = null;
                releaseAll();
            } else {
                ExecuteResponse c;
                while (out.isReady() && (c = control.poll()) != null) {
                    out.onNext(c);
                }
                // while the client does not read, completions wait here (bounded by maxInFlight); while they
                // linger, until the linger is over or the last command in flight is done
                while (out.isReady() && (splitting != null || !completed.isEmpty() && !holdingBack())) {
                    sendCompletions();
                }
                Status err = terminal;
                if (err != null) {
                    closed = true;
                    serverEnded = true;
                    out.onError(err.asRuntimeException());
                    ended();
                } else if (halfClosed && inFlight.get() == 0 && completed.isEmpty() && splitting == null
                        && control.isEmpty()) {
                    closed = true;
                    serverEnded = true;
                    Status end = endStatus;
                    if (end == null) {
                        out.onCompleted();
                    } else {
                        out.onError(end.asRuntimeException());
                    }
                    ended();
                }
            }
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
        maybeRequest();
    }

    /**
     * Sends one message of completions (draining thread only): as many as fit the client's receive limit. A
     * download whose data does not fit what is left of the message is cut: a piece ends this message (or the
     * whole message when it is the first), marked {@code more_data}, and the rest starts the next ones.
     * With {@code packed_successes}, a command that succeeded with no data is two numbers in packed lists.
     */
    private void sendCompletions() {
        long budget = messageBytes - MESSAGE_MARGIN;
        boolean packed = packSuccesses;
        sentWhole.clear(); // (left by a send that threw: not known to be copied, so not given back)
        Completions.Builder batch = Completions.newBuilder();
        long size = 0;
        int n = 0;
        int finished = 0;
        while (n < MAX_PER_MESSAGE) {
            Event e = splitting != null ? splitting : completed.peek();
            if (e == null) {
                break;
            }
            boolean succeeded = e.state() == dev.arrayd.scheduler.EventState.SUCCEEDED;
            byte[] bytes = succeeded && e.result() instanceof byte[] d ? d : null;
            if (succeeded && packed && splitting == null && (bytes == null || bytes.length == 0)) {
                if (n > 0 && budget - size < PACKED_SUCCESS_BYTES) {
                    break; // the next message takes it
                }
                batch.addSucceeded(e.id()).addSucceededDeviceNanos(e.deviceNanos());
                size += PACKED_SUCCESS_BYTES;
                n++;
                finished++;
                completed.poll();
                continue;
            }
            EventCompletion head = ProtoCodec.completion(e);
            long headBytes = head.getSerializedSize() + COMPLETION_OVERHEAD;
            long offset = splitting != null ? splitOffset : 0;
            long left = bytes == null ? 0 : bytes.length - offset;
            long room = budget - size - headBytes;
            if (left <= Math.max(room, 0)) {
                if (n > 0 && room < 0) {
                    break; // the next message takes it
                }
                batch.addCompletions(bytes == null || bytes.length == 0 ? head : head.toBuilder()
                        .setData(UnsafeByteOperations.unsafeWrap(bytes, (int) offset, (int) left)).setDataOffset(offset)
                        .build());
                size += headBytes + left;
                n++;
                finished++;
                if (bytes != null) {
                    sentWhole.add(e);
                }
                if (splitting != null) {
                    splitting = null;
                } else {
                    completed.poll();
                }
                continue;
            }
            if (n > 0 && room < MIN_PIECE) {
                break; // the piece starts the next message
            }
            long piece = Math.max(room, 1);
            batch.addCompletions(head.toBuilder().setData(UnsafeByteOperations.unsafeWrap(bytes, (int) offset, (int) piece))
                    .setDataOffset(offset).setMoreData(true).build());
            n++;
            if (splitting == null) {
                completed.poll();
                splitting = e;
            }
            splitOffset = offset + piece;
            break; // the message is full
        }
        for (Event e : sentWhole) {
            release(e.id()); // before the client can see the completion and send more
        }
        out.onNext(ExecuteResponse.newBuilder().setCompletions(batch).build());
        for (Event e : sentWhole) {
            downloadArrays.sent((byte[]) e.result()); // the transport copied the message: the array's bytes are sent
        }
        sentWhole.clear();
        unanswered.addAndGet(-finished);
    }

    @Override
    public void onError(Throwable t) {
        cancelled = true;
        ended();
    }

    @Override
    public void onCompleted() {
        halfClosed = true;
        drain();
    }

    /** The session closed: the stream ends after its completions, with UNAVAILABLE if a shutdown closed it. */
    private void sessionClosed() {
        if (scheduler.isShuttingDown()) {
            endStatus = StatusMapper.toStatus(Scheduler.shuttingDown());
        }
        onCompleted();
    }
}
