package dev.arrayd.devices.remote;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import java.util.concurrent.TimeUnit;

/**
 * A channel whose calls belong to no server call: each is made in the root gRPC context. This daemon calls its
 * peers from inside its own handlers (a client's command that needs a slab, a stream, a cancel); made in the
 * handler's context, a call to a peer would be cancelled when the handler's call ends, and would inherit its
 * deadline. The peer session's stream, opened once for the link's life, must outlive every such call.
 */
final class DetachedChannel extends ManagedChannel {

    private final ManagedChannel delegate;

    DetachedChannel(ManagedChannel delegate) {
        this.delegate = delegate;
    }

    @Override
    public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
        Context previous = Context.ROOT.attach();
        try {
            return delegate.newCall(method, options);
        } finally {
            Context.ROOT.detach(previous);
        }
    }

    @Override
    public String authority() {
        return delegate.authority();
    }

    @Override
    public ManagedChannel shutdown() {
        delegate.shutdown();
        return this;
    }

    @Override
    public boolean isShutdown() {
        return delegate.isShutdown();
    }

    @Override
    public boolean isTerminated() {
        return delegate.isTerminated();
    }

    @Override
    public ManagedChannel shutdownNow() {
        delegate.shutdownNow();
        return this;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return delegate.awaitTermination(timeout, unit);
    }
}
