package dev.arrayd.client;

import dev.arrayd.proto.v1.Completions;
import dev.arrayd.proto.v1.EventCompletion;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.ExecuteResponse;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;

/** Receives a session's stream: attached, completions, rejections, pongs; its end ends the session's commands. */
final class SessionStreamObserver implements ClientResponseObserver<ExecuteRequest, ExecuteResponse> {

    private final SessionImpl session;

    SessionStreamObserver(SessionImpl session) {
        this.session = session;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<ExecuteRequest> requestStream) {
        session.streamStarted(requestStream);
    }

    @Override
    public void onNext(ExecuteResponse response) {
        switch (response.getMsgCase()) {
            case ATTACHED -> session.attachedNow();
            case COMPLETIONS -> {
                Completions completions = response.getCompletions();
                for (EventCompletion c : completions.getCompletionsList()) {
                    session.events().apply(c);
                }
                int packed = Math.min(completions.getSucceededCount(), completions.getSucceededDeviceNanosCount());
                for (int i = 0; i < packed; i++) {
                    session.events().succeeded(completions.getSucceeded(i), completions.getSucceededDeviceNanos(i));
                }
            }
            case REJECTED -> session.events().rejected(response.getRejected().getBatchId(),
                    Protos.status(response.getRejected().getCode(), response.getRejected().getMessage()));
            default -> { } // pong, or a message this client does not know
        }
    }

    @Override
    public void onError(Throwable t) {
        session.streamEnded(Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
        session.streamEnded(Status.UNAVAILABLE.withDescription("the daemon ended the stream of session "
                + session.clientName()));
    }
}
