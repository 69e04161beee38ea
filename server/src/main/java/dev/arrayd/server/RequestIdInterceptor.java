package dev.arrayd.server;

import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Gives every call a request id and puts it in the logging MDC ({@code request_id}) while the call's
 * handlers run, so every log line of a call carries it. The id is the client's {@code x-request-id}
 * header when it sends a sane one, otherwise 16 random hex digits; it is echoed in the response
 * headers.
 *
 * <p>Handlers run on transport threads shared by many calls, so the MDC is set around each callback
 * and restored right after, never left behind. Work a call hands to device threads (completions)
 * logs without it.
 */
final class RequestIdInterceptor implements ServerInterceptor {

    static final String MDC_KEY = "request_id";
    static final Metadata.Key<String> HEADER = Metadata.Key.of("x-request-id", Metadata.ASCII_STRING_MARSHALLER);
    private static final Pattern SANE = Pattern.compile("[A-Za-z0-9._:-]{1,64}");
    private static final Logger log = LoggerFactory.getLogger(RequestIdInterceptor.class);

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        String given = headers.get(HEADER);
        String id = given != null && SANE.matcher(given).matches() ? given
                : Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
        String method = call.getMethodDescriptor().getFullMethodName();
        long t0 = System.nanoTime();
        ServerCall<Q, R> tagged = new SimpleForwardingServerCall<>(call) {
            @Override
            public void sendHeaders(Metadata responseHeaders) {
                responseHeaders.put(HEADER, id);
                super.sendHeaders(responseHeaders);
            }

            @Override
            public void close(Status status, Metadata trailers) {
                String prev = MDC.get(MDC_KEY);
                MDC.put(MDC_KEY, id);
                try {
                    if (log.isDebugEnabled()) {
                        log.debug("{} -> {} in {} µs{}", method, status.getCode(), (System.nanoTime() - t0) / 1000,
                                status.getDescription() == null ? "" : ": " + status.getDescription());
                    }
                    super.close(status, trailers);
                } finally {
                    restore(prev);
                }
            }
        };
        String prev = MDC.get(MDC_KEY);
        MDC.put(MDC_KEY, id);
        ServerCall.Listener<Q> delegate;
        try {
            delegate = next.startCall(tagged, headers);
        } finally {
            restore(prev);
        }
        return new SimpleForwardingServerCallListener<>(delegate) {
            @Override
            public void onMessage(Q message) {
                String p = MDC.get(MDC_KEY);
                MDC.put(MDC_KEY, id);
                try {
                    super.onMessage(message);
                } finally {
                    restore(p);
                }
            }

            @Override
            public void onHalfClose() {
                String p = MDC.get(MDC_KEY);
                MDC.put(MDC_KEY, id);
                try {
                    super.onHalfClose();
                } finally {
                    restore(p);
                }
            }

            @Override
            public void onCancel() {
                String p = MDC.get(MDC_KEY);
                MDC.put(MDC_KEY, id);
                try {
                    super.onCancel();
                } finally {
                    restore(p);
                }
            }

            @Override
            public void onComplete() {
                String p = MDC.get(MDC_KEY);
                MDC.put(MDC_KEY, id);
                try {
                    super.onComplete();
                } finally {
                    restore(p);
                }
            }

            @Override
            public void onReady() {
                String p = MDC.get(MDC_KEY);
                MDC.put(MDC_KEY, id);
                try {
                    super.onReady();
                } finally {
                    restore(p);
                }
            }
        };
    }

    private static void restore(String prev) {
        if (prev == null) {
            MDC.remove(MDC_KEY);
        } else {
            MDC.put(MDC_KEY, prev);
        }
    }
}
