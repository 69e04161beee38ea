package dev.arrayd.client;

import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/** Adapts a unary call's response observer to a future, mapping the response on the way. */
final class FutureObserver<R, T> implements StreamObserver<R> {
    private final CompletableFuture<T> future;
    private final Function<R, T> mapper;
    private R value;

    FutureObserver(CompletableFuture<T> future, Function<R, T> mapper) {
        this.future = future;
        this.mapper = mapper;
    }

    /** Calls unary {@code method} with {@code request}; the future of its response, mapped. */
    static <Q, R, T> CompletableFuture<T> call(Q request, java.util.function.BiConsumer<Q, StreamObserver<R>> method,
            Function<R, T> mapper) {
        CompletableFuture<T> f = new CompletableFuture<>();
        method.accept(request, new FutureObserver<>(f, mapper));
        return f;
    }

    @Override
    public void onNext(R response) {
        value = response;
    }

    @Override
    public void onError(Throwable t) {
        future.completeExceptionally(t);
    }

    @Override
    public void onCompleted() {
        try {
            future.complete(mapper.apply(value));
        } catch (RuntimeException e) {
            future.completeExceptionally(e);
        }
    }
}
