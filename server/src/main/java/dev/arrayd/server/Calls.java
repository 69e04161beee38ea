package dev.arrayd.server;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/** Answers unary calls: one value or one status, never an exception escaping into the transport. */
final class Calls {

    private Calls() {}

    /** Runs {@code body} here (it must not block) and answers with its value or its failure. */
    static <T> void unary(StreamObserver<T> out, Supplier<T> body) {
        T value;
        try {
            value = body.get();
        } catch (Throwable t) {
            out.onError(StatusMapper.toException(t));
            return;
        }
        out.onNext(value);
        out.onCompleted();
    }

    /** Runs a blocking {@code body} on {@code executor}, off the transport thread. */
    static <T> void blocking(StreamObserver<T> out, Executor executor, Supplier<T> body) {
        try {
            executor.execute(() -> unary(out, body));
        } catch (RuntimeException e) {
            out.onError(StatusMapper.toException(e));
        }
    }

    /** Completes an asynchronous answer later; tolerant of a client that already left. */
    static <T> void complete(StreamObserver<T> out, T value) {
        if (out instanceof ServerCallStreamObserver<T> s && s.isCancelled()) {
            return;
        }
        out.onNext(value);
        out.onCompleted();
    }

    static <T> void fail(StreamObserver<T> out, Throwable t) {
        if (out instanceof ServerCallStreamObserver<T> s && s.isCancelled()) {
            return;
        }
        out.onError(StatusMapper.toException(t));
    }
}
