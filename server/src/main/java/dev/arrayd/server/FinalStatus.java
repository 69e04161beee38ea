package dev.arrayd.server;

import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.function.BiFunction;

/** An interceptor that rewrites the status (and trailers) every call ends with, whoever ends it. */
final class FinalStatus {

    private FinalStatus() {}

    /** {@code rewrite} gets the status and the trailers (which it may add to) and returns the status to send. */
    static ServerInterceptor rewriting(BiFunction<Status, Metadata, Status> rewrite) {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                    ServerCallHandler<Q, R> next) {
                return next.startCall(new SimpleForwardingServerCall<>(call) {
                    @Override
                    public void close(Status status, Metadata trailers) {
                        super.close(rewrite.apply(status, trailers), trailers);
                    }
                }, headers);
            }
        };
    }
}
