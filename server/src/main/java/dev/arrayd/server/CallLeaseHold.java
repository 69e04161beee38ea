package dev.arrayd.server;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A call in progress keeps the session it names alive: from its first request message to its end, a call whose
 * request has a {@code session} field holds that session's lease (a 20 s Compile or a WaitEvents on a long
 * kernel does not find its session reclaimed under it), and its end renews the lease. Only a session of the
 * caller's own tenant is held; the session stream keeps its session alive by other means (see
 * {@link SessionLease#expired}).
 */
final class CallLeaseHold implements ServerInterceptor {

    private final SessionRegistry sessions;
    /** The {@code session} string field of each request type, if it has one. */
    private final Map<Descriptor, Optional<FieldDescriptor>> sessionFields = new ConcurrentHashMap<>();

    CallLeaseHold(SessionRegistry sessions) {
        this.sessions = sessions;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        Hold hold = new Hold();
        ServerCall<Q, R> releasing = new SimpleForwardingServerCall<>(call) {
            @Override
            public void close(Status status, Metadata trailers) {
                hold.release(); // before the answer: whoever hears it finds the lease renewed
                super.close(status, trailers);
            }
        };
        return new SimpleForwardingServerCallListener<>(next.startCall(releasing, headers)) {
            @Override
            public void onMessage(Q message) {
                if (!hold.tried) {
                    hold.tried = true;
                    String token = sessionToken(message);
                    if (token != null && !token.isEmpty()) {
                        hold.take(sessions.hold(token));
                    }
                }
                super.onMessage(message);
            }

            @Override
            public void onCancel() {
                hold.release();
                super.onCancel();
            }

            @Override
            public void onComplete() {
                hold.release();
                super.onComplete();
            }
        };
    }

    private String sessionToken(Object message) {
        if (!(message instanceof Message m)) {
            return null;
        }
        Optional<FieldDescriptor> f = sessionFields.computeIfAbsent(m.getDescriptorForType(), d ->
                Optional.ofNullable(d.findFieldByName("session"))
                        .filter(x -> x.getType() == FieldDescriptor.Type.STRING && !x.isRepeated()));
        return f.map(x -> (String) m.getField(x)).orElse(null);
    }

    /** The lease one call holds, released once. */
    private final class Hold {
        boolean tried; // only the call's serialized listener touches it
        private SessionLease lease; // guarded by this

        synchronized void take(SessionLease l) {
            lease = l;
        }

        void release() {
            SessionLease l;
            synchronized (this) {
                l = lease;
                lease = null;
            }
            if (l != null) {
                sessions.release(l);
            }
        }
    }
}
