package dev.arrayd.server.metrics;

import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * gRPC server metrics under the names operators know from go-grpc-prometheus:
 * {@code grpc_server_started_total}, {@code grpc_server_handled_total} (with {@code grpc_code}) and
 * {@code grpc_server_handling_seconds}, labelled by {@code grpc_service}, {@code grpc_method} and
 * {@code grpc_type}. Per call, not per command: a session's Execute stream is one call however many
 * commands it carries.
 */
public final class GrpcMetricsInterceptor implements ServerInterceptor {

    private final MeterRegistry registry;
    private final ConcurrentHashMap<String, MethodMeters> methods = new ConcurrentHashMap<>();

    public GrpcMetricsInterceptor(MeterRegistry registry) {
        this.registry = registry;
    }

    private final class MethodMeters {
        final String service;
        final String method;
        final String type;
        final Counter started;
        final Timer handling;
        final Counter[] handled = new Counter[Status.Code.values().length];

        MethodMeters(MethodDescriptor<?, ?> d) {
            String full = d.getFullMethodName();
            int slash = full.lastIndexOf('/');
            service = slash < 0 ? "" : full.substring(0, slash);
            method = full.substring(slash + 1);
            type = switch (d.getType()) {
                case UNARY -> "unary";
                case CLIENT_STREAMING -> "client_stream";
                case SERVER_STREAMING -> "server_stream";
                case BIDI_STREAMING -> "bidi_stream";
                case UNKNOWN -> "unknown";
            };
            started = Counter.builder("grpc.server.started").tags("grpc_service", service, "grpc_method", method,
                    "grpc_type", type).description("RPCs started on the server").register(registry);
            handling = Timer.builder("grpc.server.handling").tags("grpc_service", service, "grpc_method", method,
                    "grpc_type", type).description("Time from the start of an RPC to its status")
                    .serviceLevelObjectives(ArraydMetrics.GRPC_BUCKETS).register(registry);
        }

        void done(Status.Code code, long nanos) {
            Counter c = handled[code.ordinal()];
            if (c == null) {
                // racy but harmless: the registry returns the same counter for the same id
                c = Counter.builder("grpc.server.handled").tags("grpc_service", service, "grpc_method", method,
                        "grpc_type", type, "grpc_code", code.name().toUpperCase(Locale.ROOT))
                        .description("RPCs completed on the server, by status code").register(registry);
                handled[code.ordinal()] = c;
            }
            c.increment();
            handling.record(nanos, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        MethodDescriptor<Q, R> d = call.getMethodDescriptor();
        MethodMeters m = methods.computeIfAbsent(d.getFullMethodName(), k -> new MethodMeters(d));
        m.started.increment();
        long t0 = System.nanoTime();
        AtomicBoolean done = new AtomicBoolean();
        ServerCall<Q, R> counted = new SimpleForwardingServerCall<>(call) {
            @Override
            public void close(Status status, Metadata trailers) {
                if (done.compareAndSet(false, true)) {
                    m.done(status.getCode(), System.nanoTime() - t0);
                }
                super.close(status, trailers);
            }
        };
        return new SimpleForwardingServerCallListener<>(next.startCall(counted, headers)) {
            @Override
            public void onCancel() {
                // the client went away (or the deadline passed) before a status was sent
                if (done.compareAndSet(false, true)) {
                    m.done(Status.Code.CANCELLED, System.nanoTime() - t0);
                }
                super.onCancel();
            }
        };
    }
}
