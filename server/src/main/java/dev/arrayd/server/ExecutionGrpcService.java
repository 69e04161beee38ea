package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.proto.v1.AwaitStreamRequest;
import dev.arrayd.proto.v1.AwaitStreamResponse;
import dev.arrayd.proto.v1.CancelRequest;
import dev.arrayd.proto.v1.CancelResponse;
import dev.arrayd.proto.v1.CreateStreamRequest;
import dev.arrayd.proto.v1.DestroyStreamRequest;
import dev.arrayd.proto.v1.DestroyStreamResponse;
import dev.arrayd.proto.v1.EventCompletion;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.ExecuteResponse;
import dev.arrayd.proto.v1.ExecutionServiceGrpc;
import dev.arrayd.proto.v1.QueryEventsRequest;
import dev.arrayd.proto.v1.QueryEventsResponse;
import dev.arrayd.proto.v1.CreateStreamResponse;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.SubmitResponse;
import dev.arrayd.proto.v1.WaitEventsRequest;
import dev.arrayd.proto.v1.WaitEventsResponse;
import dev.arrayd.scheduler.CommandSpec;
import dev.arrayd.scheduler.Event;
import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.scheduler.Session;
import dev.arrayd.scheduler.Stream;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/** Commands, events and streams. Every handler is non-blocking: waits register listeners. */
final class ExecutionGrpcService extends ExecutionServiceGrpc.ExecutionServiceImplBase {

    private final Scheduler scheduler;
    private final SessionRegistry sessions;
    private final Admission admission;
    private final CompletionLinger linger;
    private final DownloadArrays downloadArrays;
    private final TransferMemory transferMemory;
    /** The bytes of uploads each recorded graph keeps in the heap, by graph handle (held until it goes). */
    private final java.util.concurrent.ConcurrentHashMap<Long, Long> graphUploads = new java.util.concurrent.ConcurrentHashMap<>();

    ExecutionGrpcService(Scheduler scheduler, SessionRegistry sessions, Admission admission, CompletionLinger linger,
            DownloadArrays downloadArrays, TransferMemory transferMemory) {
        this.linger = linger;
        this.downloadArrays = downloadArrays;
        this.transferMemory = transferMemory;
        this.scheduler = scheduler;
        this.sessions = sessions;
        this.admission = admission;
    }

    @Override
    public StreamObserver<ExecuteRequest> execute(StreamObserver<ExecuteResponse> out) {
        return new SessionStreamHandler(scheduler, sessions, out, admission, linger, downloadArrays, transferMemory);
    }

    /**
     * Submits commands. A call with a gRPC deadline gives it to each of its commands that has none or a
     * later one ({@code deadline_unix_nanos}): a command that has not started by then fails with
     * DEADLINE_EXCEEDED instead of running.
     */
    @Override
    public void submit(SubmitRequest req, StreamObserver<SubmitResponse> out) {
        Calls.unary(out, () -> {
            SessionLease l = sessions.lease(req.getSession());
            Session s = l.session;
            // the call's deadline bounds its commands: past it, one not yet started fails instead of running
            List<CommandSpec> specs = CommandDecoder.batch(req.getCommandsList(), CommandDecoder.Call.SUBMIT,
                    scheduler.config().maxInlineBytes(), Calls.deadlineNanos(), l.regions);
            admission.checkSession(l);
            // its inline uploads' data stays in the heap until they have run: held until all of its commands are done
            long held = specs.stream().mapToLong(TransferMemory::heldBy).sum();
            if (held == 0) {
                return answer(admission.admit(l, specs.size(), () -> scheduler.submit(s, specs, e -> l.commandDone())));
            }
            transferMemory.hold(held, "Submit");
            AtomicInteger left = new AtomicInteger(specs.size());
            try {
                return answer(admission.admit(l, specs.size(), () -> scheduler.submit(s, specs, e -> {
                    l.commandDone();
                    if (left.decrementAndGet() == 0) {
                        transferMemory.release(held);
                    }
                })));
            } catch (RuntimeException e) {
                transferMemory.release(held); // nothing was submitted
                throw e;
            }
        });
    }

    /** The events' ids. */
    private static SubmitResponse answer(List<Event> events) {
        SubmitResponse.Builder b = SubmitResponse.newBuilder();
        for (Event e : events) {
            b.addEvents(e.id());
        }
        return b.build();
    }

    /** Records a graph: its commands are validated now and kept for {@link #replayGraph}. */
    @Override
    public void recordGraph(dev.arrayd.proto.v1.RecordGraphRequest req, StreamObserver<dev.arrayd.proto.v1.RecordGraphResponse> out) {
        Calls.unary(out, () -> {
            SessionLease l = sessions.lease(req.getSession());
            List<CommandSpec> specs = CommandDecoder.batch(req.getCommandsList(), CommandDecoder.Call.GRAPH,
                    scheduler.config().maxInlineBytes(), CommandSpec.NO_DEADLINE);
            // its uploads' data (copied out of the request) stays in the heap for as long as the graph lives
            long held = specs.stream().filter(c -> c.op() instanceof CommandSpec.UploadOp)
                    .mapToLong(TransferMemory::heldBy).sum();
            if (held > 0) {
                transferMemory.hold(held, "RecordGraph");
            }
            dev.arrayd.scheduler.Graph g;
            try {
                g = scheduler.recordGraph(l.session, specs);
            } catch (RuntimeException e) {
                transferMemory.release(held);
                throw e;
            }
            if (held > 0) {
                long handle = g.handle();
                graphUploads.put(handle, held);
                l.session.onClose(() -> graphGone(handle)); // (at once if the session closed meanwhile)
            }
            return dev.arrayd.proto.v1.RecordGraphResponse.newBuilder().setGraph(g.handle()).setCommands(g.size()).build();
        });
    }

    /** Replays a recorded graph; like {@link #submit}, its commands count against the in-flight limits. */
    @Override
    public void replayGraph(dev.arrayd.proto.v1.ReplayGraphRequest req,
            StreamObserver<dev.arrayd.proto.v1.ReplayGraphResponse> out) {
        Calls.unary(out, () -> {
            SessionLease l = sessions.lease(req.getSession());
            var replay = CommandDecoder.replay(req, true, Calls.deadlineNanos());
            int n = scheduler.graph(l.session, req.getGraph()).size();
            admission.checkSession(l);
            var events = admission.admit(l, n,
                    () -> scheduler.replayGraph(l.session, req.getGraph(), replay, e -> l.commandDone()));
            return dev.arrayd.proto.v1.ReplayGraphResponse.newBuilder().addAllEvents(answer(events).getEventsList()).build();
        });
    }

    @Override
    public void destroyGraph(dev.arrayd.proto.v1.DestroyGraphRequest req,
            StreamObserver<dev.arrayd.proto.v1.DestroyGraphResponse> out) {
        Calls.unary(out, () -> {
            scheduler.destroyGraph(sessions.session(req.getSession()), req.getGraph());
            graphGone(req.getGraph());
            return dev.arrayd.proto.v1.DestroyGraphResponse.getDefaultInstance();
        });
    }

    /** A graph was destroyed, or its session closed: what its uploads held of the transfer memory goes back (once). */
    private void graphGone(long handle) {
        Long bytes = graphUploads.remove(handle);
        if (bytes != null) {
            transferMemory.release(bytes);
        }
    }

    /**
     * Answers when every listed event is done. The call's deadline bounds the wait only: when it runs
     * out the client hears DEADLINE_EXCEEDED and the commands it waited for carry on (a wait is not a
     * claim on them: the client may wait again, or read the result on another call).
     */
    @Override
    public void waitEvents(WaitEventsRequest req, StreamObserver<WaitEventsResponse> out) {
        Event[] events;
        try {
            Session s = sessions.session(req.getSession());
            if (req.getEventsCount() > CommandDecoder.MAX_WAIT_EVENTS) {
                throw ArraydException.invalid("events: " + req.getEventsCount() + " (expected: at most "
                        + CommandDecoder.MAX_WAIT_EVENTS + ")");
            }
            long[] ids = Wire.events(req.getEventsList(), "events");
            events = new Event[ids.length];
            for (int i = 0; i < events.length; i++) {
                try {
                    events[i] = scheduler.event(s, ids[i]);
                } catch (ArraydException e) {
                    throw new ArraydException(e.code(), "events[" + i + "]: " + e.getMessage(), e);
                }
            }
        } catch (RuntimeException e) {
            Calls.fail(out, e);
            return;
        }
        AtomicInteger left = new AtomicInteger(events.length + 1);
        Runnable answer = () -> {
            WaitEventsResponse.Builder b = WaitEventsResponse.newBuilder();
            for (int i = 0; i < events.length; i++) {
                b.addCompletions(ProtoCodec.completion(req.getEvents(i), events[i]));
            }
            Calls.complete(out, b.build());
        };
        for (Event e : events) {
            e.onDone(x -> {
                if (left.decrementAndGet() == 0) {
                    answer.run();
                }
            });
        }
        if (left.decrementAndGet() == 0) {
            answer.run();
        }
    }

    @Override
    public void queryEvents(QueryEventsRequest req, StreamObserver<QueryEventsResponse> out) {
        Calls.unary(out, () -> {
            Session s = sessions.session(req.getSession());
            if (req.getEventsCount() > CommandDecoder.MAX_WAIT_EVENTS) {
                throw ArraydException.invalid("events: " + req.getEventsCount() + " (expected: at most "
                        + CommandDecoder.MAX_WAIT_EVENTS + ")");
            }
            QueryEventsResponse.Builder b = QueryEventsResponse.newBuilder();
            long[] ids = Wire.events(req.getEventsList(), "events");
            for (int i = 0; i < ids.length; i++) {
                long id = ids[i];
                try {
                    b.addCompletions(ProtoCodec.completion(id, scheduler.event(s, id)));
                } catch (ArraydException e) {
                    throw new ArraydException(e.code(), "events[" + i + "]: " + e.getMessage(), e);
                }
            }
            return b.build();
        });
    }

    @Override
    public void cancel(CancelRequest req, StreamObserver<CancelResponse> out) {
        Calls.unary(out, () -> {
            Session s = sessions.session(req.getSession());
            CommandDecoder.checkWaitCount(req.getEventsCount(), "events");
            int n = scheduler.cancel(s, Wire.events(req.getEventsList(), "events"));
            return CancelResponse.newBuilder().setCancelled(n).build();
        });
    }

    @Override
    public void createStream(CreateStreamRequest req, StreamObserver<CreateStreamResponse> out) {
        Calls.unary(out, () -> {
            SessionLease l = sessions.lease(req.getSession());
            l.usage.reserveStream();
            Stream st;
            try {
                st = scheduler.createStream(l.session, req.getDevice());
            } catch (RuntimeException e) {
                l.usage.streams.decrementAndGet();
                throw e;
            }
            l.streams.incrementAndGet();
            return CreateStreamResponse.newBuilder().setStream(st.handle()).setDevice(st.device().id().toString()).build();
        });
    }

    @Override
    public void destroyStream(DestroyStreamRequest req, StreamObserver<DestroyStreamResponse> out) {
        Calls.unary(out, () -> {
            SessionLease l = sessions.lease(req.getSession());
            scheduler.destroyStream(l.session, req.getStream());
            if (l.streams.getAndUpdate(n -> n > 0 ? n - 1 : n) > 0) {
                l.usage.streams.decrementAndGet();
            }
            return DestroyStreamResponse.getDefaultInstance();
        });
    }

    @Override
    public void awaitStream(AwaitStreamRequest req, StreamObserver<AwaitStreamResponse> out) {
        Stream st;
        try {
            Session s = sessions.session(req.getSession());
            st = scheduler.stream(s, req.getStream(), req.getDevice());
        } catch (RuntimeException e) {
            Calls.fail(out, e);
            return;
        }
        st.allWork().onDone(e -> {
            EventCompletion last = ProtoCodec.completion(e.id(), e);
            Calls.complete(out, AwaitStreamResponse.newBuilder().setLast(last).setIdle(st.isIdle()).build());
        });
    }
}
