package dev.arrayd.server;

import dev.arrayd.scheduler.CommandSpec;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** Answers unary calls: one value or one status, never an exception escaping into the transport. */
final class Calls {

    private Calls() {}

    /**
     * The current call's gRPC deadline on the scheduler's clock ({@link System#nanoTime()}, the clock the
     * daemon gives its scheduler), or {@link CommandSpec#NO_DEADLINE} when the call has none. A deadline
     * already past is in the past here too.
     */
    static long deadlineNanos() {
        Deadline d = Context.current().getDeadline();
        if (d == null) {
            return CommandSpec.NO_DEADLINE;
        }
        long left = d.timeRemaining(TimeUnit.NANOSECONDS);
        long now = System.nanoTime();
        return left >= CommandSpec.NO_DEADLINE - now ? CommandSpec.NO_DEADLINE - 1 : now + left;
    }

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
