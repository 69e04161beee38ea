package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
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
 * to send ({@code isReady}: the client reads what we send), and (c) few control replies wait. When
 * one of them fails the stream stops reading; gRPC's flow control then stops the client's writes
 * (its outbox grows on its side, not ours). Completions are only handed to the transport while it
 * is ready, so what the daemon holds per stream is bounded by {@code maxInFlight} completions plus
 * one transport window, however slowly the client reads.
 *
 * <p><b>Cancel.</b> A half-close finishes the stream after the completions of its commands; a cancel
 * (the client's, a deadline's or a broken connection's) cancels the session's pending commands (see
 * {@link #cancelPending}).
 */
final class SessionStreamHandler implements StreamObserver<ExecuteRequest>, EventListener {

    /** Most completions in one response message. */
    private static final int MAX_PER_MESSAGE = 1024;
    /** A response message is sent once its downloaded data passes this (clients accept 64 MiB by default). */
    private static final int MAX_DATA_PER_MESSAGE = 8 << 20;

    /** Downloaded bytes waiting to be sent beyond which the stream stops reading. */
    private static final long MAX_QUEUED_DATA_BYTES = 64L << 20;
    /** Downloaded bytes in completions not yet handed to the transport. */
    private final AtomicLong queuedData = new AtomicLong();

    /** Control replies (pongs, rejections) queued beyond which the stream stops reading. */
    private static final int MAX_CONTROL_QUEUED = 64;

    private final Scheduler scheduler;
    private final SessionRegistry sessions;
    private final Admission admission;
    private final int maxInFlight;
    private final ServerCallStreamObserver<ExecuteResponse> out;
    /** Commands submitted whose completion has not been handed to the transport yet. */
    private final AtomicLong unanswered = new AtomicLong();
    /** Whether a message has been requested and not delivered yet (at most one at a time). */
    private final java.util.concurrent.atomic.AtomicBoolean requested = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile SessionLease lease;
    private final ConcurrentLinkedQueue<ExecuteResponse> control = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Event> completed = new ConcurrentLinkedQueue<>();
    private final AtomicInteger wip = new AtomicInteger();
    private final AtomicLong inFlight = new AtomicLong();
    private volatile Session session;
    private volatile Status terminal;      // set once: the stream ends with this error
    private volatile boolean halfClosed;   // the client sent onCompleted; finish after in-flight work
    private volatile boolean cancelled;    // the client went away
    private volatile boolean serverEnded;  // we ended the call (status sent): a late cancel is not the client's
    private boolean closed;                // only the draining thread touches it

    SessionStreamHandler(Scheduler scheduler, SessionRegistry sessions, StreamObserver<ExecuteResponse> out,
            Admission admission) {
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
                && queuedData.get() < MAX_QUEUED_DATA_BYTES && control.size() < MAX_CONTROL_QUEUED && out.isReady() && requested.compareAndSet(false, true)) {
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
        requested.set(false);
        if (terminal != null || cancelled) {
            return;
        }
        SessionLease l = lease;
        if (l != null) {
            l.renewedNanos = sessions.clock().nanoTime(); // every message renews the lease
        }
        switch (req.getMsgCase()) {
            case ATTACH -> attach(req.getAttach().getSession());
            case BATCH -> batch(req.getBatch());
            case REPLAY -> replay(req.getReplay());
            case PING -> send(ExecuteResponse.newBuilder().setPong(req.getPing()).build());
            case MSG_NOT_SET -> fail(Status.INVALID_ARGUMENT.withDescription(
                    "msg: unset (expected: attach, batch, replay or ping)"));
        }
        maybeRequest();
    }

    private void attach(String token) {
        if (session != null) {
            fail(Status.FAILED_PRECONDITION.withDescription("attach: this stream is already attached to a session"));
            return;
        }
        SessionLease l;
        try {
            l = sessions.lease(token); // another tenant's token is NOT_FOUND, like an unknown one
        } catch (ArraydException e) {
            fail(StatusMapper.toStatus(e));
            return;
        }
        Session s = l.session;
        l.liveStreams.incrementAndGet();
        lease = l;
        if (cancelled) {
            ended();
        }
        session = s;
        // a closed session ends its stream, after the completions of what it had submitted
        s.onClose(this::onCompleted);
        send(ExecuteResponse.newBuilder().setAttached(Attached.newBuilder().setSession(token)).build());
    }

    private void batch(CommandBatch batch) {
        Session s = session;
        if (s == null) {
            fail(Status.FAILED_PRECONDITION.withDescription("batch: the stream is not attached (send attach first)"));
            return;
        }
        try {
            List<CommandSpec> specs = CommandDecoder.batch(batch.getCommandsList(), CommandDecoder.Call.STREAM,
                    scheduler.config().maxInlineBytes(), CommandSpec.NO_DEADLINE);
            submitCounted(specs.size(), () -> scheduler.submit(s, specs, this));
        } catch (RuntimeException e) {
            reject(batch.getBatchId(), e);
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
        try {
            admission.admit(lease, n, () -> {
                submit.run();
                return null;
            });
        } catch (RuntimeException e) {
            inFlight.addAndGet(-n);
            unanswered.addAndGet(-n);
            throw e;
        }
    }

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
        if (event.result() instanceof byte[] data) {
            queuedData.addAndGet(data.length);
        }
        completed.add(event);
        inFlight.decrementAndGet();
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
            } else {
                ExecuteResponse c;
                while (out.isReady() && (c = control.poll()) != null) {
                    out.onNext(c);
                }
                Event e;
                // while the client does not read, completions wait here (bounded by maxInFlight)
                while (out.isReady() && (e = completed.poll()) != null) {
                    Completions.Builder batch = Completions.newBuilder();
                    int n = 0;
                    long data = 0;
                    do {
                        EventCompletion done = ProtoCodec.completion(e);
                        batch.addCompletions(done);
                        data += done.getData().size();
                    } while (++n < MAX_PER_MESSAGE && data < MAX_DATA_PER_MESSAGE && (e = completed.poll()) != null);
                    out.onNext(ExecuteResponse.newBuilder().setCompletions(batch).build());
                    unanswered.addAndGet(-n);
                    queuedData.addAndGet(-data);
                }
                Status err = terminal;
                if (err != null) {
                    closed = true;
                    serverEnded = true;
                    out.onError(err.asRuntimeException());
                    ended();
                } else if (halfClosed && inFlight.get() == 0 && completed.isEmpty() && control.isEmpty()) {
                    closed = true;
                    serverEnded = true;
                    out.onCompleted();
                    ended();
                }
            }
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
        maybeRequest();
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
}
