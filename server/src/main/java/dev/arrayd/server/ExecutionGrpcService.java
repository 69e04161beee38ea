package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.proto.v1.AwaitStreamRequest;
import dev.arrayd.proto.v1.AwaitStreamResponse;
import dev.arrayd.proto.v1.CreateStreamRequest;
import dev.arrayd.proto.v1.DestroyStreamRequest;
import dev.arrayd.proto.v1.DestroyStreamResponse;
import dev.arrayd.proto.v1.EventCompletion;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.ExecuteResponse;
import dev.arrayd.proto.v1.ExecutionServiceGrpc;
import dev.arrayd.proto.v1.QueryEventsRequest;
import dev.arrayd.proto.v1.QueryEventsResponse;
import dev.arrayd.proto.v1.StreamInfo;
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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/** Commands, events and streams. Every handler is non-blocking: waits register listeners. */
final class ExecutionGrpcService extends ExecutionServiceGrpc.ExecutionServiceImplBase {

    private final Scheduler scheduler;

    ExecutionGrpcService(Scheduler scheduler) {
        this.scheduler = scheduler;
    }

    @Override
    public StreamObserver<ExecuteRequest> execute(StreamObserver<ExecuteResponse> out) {
        return new SessionStreamHandler(scheduler, out);
    }

    @Override
    public void submit(SubmitRequest req, StreamObserver<SubmitResponse> out) {
        Calls.unary(out, () -> {
            Session s = scheduler.session(req.getSession());
            List<CommandSpec> specs = new ArrayList<>(req.getCommandsCount());
            for (int i = 0; i < req.getCommandsCount(); i++) {
                try {
                    if (req.getCommands(i).hasDownload()) {
                        // its bytes could only come back in a completion, which unary calls do not keep
                        throw ArraydException.invalid("download: not available in unary Submit (expected: the session"
                                + " stream, whose completion carries the data, or BufferService.ReadBuffer)");
                    }
                    specs.add(ProtoCodec.command(req.getCommands(i), true, scheduler.config().maxInlineBytes()));
                } catch (ArraydException e) {
                    throw new ArraydException(e.code(), "commands[" + i + "]: " + e.getMessage(), e);
                }
            }
            SubmitResponse.Builder b = SubmitResponse.newBuilder();
            for (Event e : scheduler.submit(s, specs, null)) {
                b.addEvents(e.id());
            }
            return b.build();
        });
    }

    @Override
    public void waitEvents(WaitEventsRequest req, StreamObserver<WaitEventsResponse> out) {
        Event[] events;
        try {
            Session s = scheduler.session(req.getSession());
            events = new Event[req.getEventsCount()];
            for (int i = 0; i < events.length; i++) {
                try {
                    events[i] = scheduler.event(s, req.getEvents(i));
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
            Session s = scheduler.session(req.getSession());
            QueryEventsResponse.Builder b = QueryEventsResponse.newBuilder();
            for (int i = 0; i < req.getEventsCount(); i++) {
                long id = req.getEvents(i);
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
    public void createStream(CreateStreamRequest req, StreamObserver<StreamInfo> out) {
        Calls.unary(out, () -> {
            Session s = scheduler.session(req.getSession());
            Stream st = scheduler.createStream(s, req.getDevice());
            return StreamInfo.newBuilder().setStream(st.handle()).setDevice(st.device().id().toString()).build();
        });
    }

    @Override
    public void destroyStream(DestroyStreamRequest req, StreamObserver<DestroyStreamResponse> out) {
        Calls.unary(out, () -> {
            scheduler.destroyStream(scheduler.session(req.getSession()), req.getStream());
            return DestroyStreamResponse.getDefaultInstance();
        });
    }

    @Override
    public void awaitStream(AwaitStreamRequest req, StreamObserver<AwaitStreamResponse> out) {
        Stream st;
        try {
            Session s = scheduler.session(req.getSession());
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
