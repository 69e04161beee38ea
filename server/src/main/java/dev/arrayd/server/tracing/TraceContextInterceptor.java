package dev.arrayd.server.tracing;

import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;

/**
 * Takes the client's trace context from the call's metadata (W3C {@code traceparent} / {@code tracestate},
 * or whatever OTEL_PROPAGATORS names) and makes it current while the call's handlers run, so the commands a
 * call submits become spans of the client's trace. A call without one starts no trace of its own.
 */
public final class TraceContextInterceptor implements ServerInterceptor {

    private static final TextMapGetter<Metadata> METADATA = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Metadata carrier) {
            return carrier.keys();
        }

        @Override
        public String get(Metadata carrier, String key) {
            return carrier == null || key.endsWith(Metadata.BINARY_HEADER_SUFFIX) ? null
                    : carrier.get(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER));
        }
    };

    private final Tracing tracing;

    public TraceContextInterceptor(Tracing tracing) {
        this.tracing = tracing;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        Context parent = tracing.propagator().extract(Context.root(), headers, METADATA);
        if (parent == Context.root()) {
            return next.startCall(call, headers);
        }
        ServerCall.Listener<Q> delegate;
        try (Scope ignored = parent.makeCurrent()) {
            delegate = next.startCall(call, headers);
        }
        return new SimpleForwardingServerCallListener<>(delegate) {
            @Override
            public void onMessage(Q message) {
                try (Scope ignored = parent.makeCurrent()) {
                    super.onMessage(message);
                }
            }

            @Override
            public void onHalfClose() {
                try (Scope ignored = parent.makeCurrent()) {
                    super.onHalfClose();
                }
            }
        };
    }
}
