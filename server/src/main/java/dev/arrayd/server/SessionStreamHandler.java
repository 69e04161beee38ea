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
 */
final class SessionStreamHandler implements StreamObserver<ExecuteRequest>, EventListener {

    /** Most completions in one response message. */
    private static final int MAX_PER_MESSAGE = 1024;
    /** A response message is sent once its downloaded data passes this (clients accept 64 MiB by default). */
    private static final int MAX_DATA_PER_MESSAGE = 8 << 20;

    private final Scheduler scheduler;
    private final ServerCallStreamObserver<ExecuteResponse> out;
    private final ConcurrentLinkedQueue<ExecuteResponse> control = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Event> completed = new ConcurrentLinkedQueue<>();
    private final AtomicInteger wip = new AtomicInteger();
    private final AtomicLong inFlight = new AtomicLong();
    private volatile Session session;
    private volatile Status terminal;      // set once: the stream ends with this error
    private volatile boolean halfClosed;   // the client sent onCompleted; finish after in-flight work
    private volatile boolean cancelled;    // the client went away
    private boolean closed;                // only the draining thread touches it

    SessionStreamHandler(Scheduler scheduler, StreamObserver<ExecuteResponse> out) {
        this.scheduler = scheduler;
        this.out = (ServerCallStreamObserver<ExecuteResponse>) out;
        // Without a handler, onNext after a client cancel throws; with one it is a no-op.
        this.out.setOnCancelHandler(() -> cancelled = true);
    }

    /** The attached session, or null. */
    Session session() {
        return session;
    }

    @Override
    public void onNext(ExecuteRequest req) {
        if (terminal != null || cancelled) {
            return;
        }
        switch (req.getMsgCase()) {
            case ATTACH -> attach(req.getAttach().getSession());
            case BATCH -> batch(req.getBatch());
            case PING -> send(ExecuteResponse.newBuilder().setPong(req.getPing()).build());
            case MSG_NOT_SET -> fail(Status.INVALID_ARGUMENT.withDescription("msg: unset (expected: attach, batch or ping)"));
        }
    }

    private void attach(String token) {
        if (session != null) {
            fail(Status.FAILED_PRECONDITION.withDescription("attach: this stream is already attached to a session"));
            return;
        }
        Session s;
        try {
            s = scheduler.session(token);
        } catch (ArraydException e) {
            fail(StatusMapper.toStatus(e));
            return;
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
            long maxInline = scheduler.config().maxInlineBytes();
            List<CommandSpec> specs = new ArrayList<>(batch.getCommandsCount());
            for (int i = 0; i < batch.getCommandsCount(); i++) {
                try {
                    specs.add(ProtoCodec.command(batch.getCommands(i), false, maxInline));
                } catch (ArraydException e) {
                    throw new ArraydException(e.code(), "commands[" + i + "]: " + e.getMessage(), e);
                }
            }
            inFlight.addAndGet(specs.size());
            try {
                scheduler.submit(s, specs, this);
            } catch (RuntimeException e) {
                inFlight.addAndGet(-specs.size());
                throw e;
            }
        } catch (ArraydException e) {
            reject(batch.getBatchId(), e);
        } catch (RuntimeException e) {
            // the same mapping as unary calls (it logs what it does not expect)
            Status st = StatusMapper.toStatus(e);
            reject(batch.getBatchId(), new ArraydException(ErrorCode.valueOf(st.getCode().name()), st.getDescription(), e));
        }
    }

    private void reject(long batchId, ArraydException e) {
        send(ExecuteResponse.newBuilder().setRejected(BatchRejected.newBuilder()
                .setBatchId(batchId).setCode(StatusMapper.codeValue(e)).setMessage(e.getMessage())).build());
    }

    /** An event of this stream's commands completed (device thread). */
    @Override
    public void onEvent(Event event) {
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
                while ((c = control.poll()) != null) {
                    out.onNext(c);
                }
                Event e;
                while ((e = completed.poll()) != null) {
                    Completions.Builder batch = Completions.newBuilder();
                    int n = 0;
                    long data = 0;
                    do {
                        EventCompletion done = ProtoCodec.completion(e);
                        batch.addCompletions(done);
                        data += done.getData().size();
                    } while (++n < MAX_PER_MESSAGE && data < MAX_DATA_PER_MESSAGE && (e = completed.poll()) != null);
                    out.onNext(ExecuteResponse.newBuilder().setCompletions(batch).build());
                }
                Status err = terminal;
                if (err != null) {
                    closed = true;
                    out.onError(err.asRuntimeException());
                } else if (halfClosed && inFlight.get() == 0 && completed.isEmpty() && control.isEmpty()) {
                    closed = true;
                    out.onCompleted();
                }
            }
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }

    @Override
    public void onError(Throwable t) {
        cancelled = true;
    }

    @Override
    public void onCompleted() {
        halfClosed = true;
        drain();
    }
}
