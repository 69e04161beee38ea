package dev.arrayd.server.auth;

import com.google.protobuf.MessageLite;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Set;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Decides which tenant a call acts for, once per call (a session stream's thousands of commands pay
 * for it once), and puts it in the call's {@link Context} ({@link #TENANT}).
 *
 * <ul>
 *   <li>{@code authorization: Bearer <token>} with a token of the token file: that token's tenant;</li>
 *   <li>else, under mutual TLS, the client certificate's subject CN: the tenant the file maps
 *       {@code cert:<CN>} to, or a tenant named after the CN with the default quotas (the configured CA
 *       vouched for it);</li>
 *   <li>else, with authentication configured: UNAUTHENTICATED;</li>
 *   <li>with none configured: the tenant {@code default}.</li>
 * </ul>
 * Health checks and server reflection stay open (probes and tools carry no credentials; neither
 * reveals anything a tenant owns). Under a tenant's {@code message} quota, an inbound message
 * larger than it ends the call with RESOURCE_EXHAUSTED (see {@link MessageQuota}).
 */
public final class AuthInterceptor implements ServerInterceptor {

    public static final Context.Key<Tenant> TENANT = Context.key("arrayd-tenant");

    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    /** Services answered without credentials. */
    static final Set<String> OPEN_SERVICES = Set.of("grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection");

    private final TokenStore tokens;       // null: no token file
    private final boolean clientCertificates;
    private final Tenant defaultTenant;

    /**
     * @param tokens             the token file, or null
     * @param clientCertificates whether mutual TLS is on (client certificates name tenants)
     * @param defaultQuotas      quotas of the {@code default} tenant and of certificate tenants not in the file
     */
    public AuthInterceptor(TokenStore tokens, boolean clientCertificates, Quotas defaultQuotas) {
        this.tokens = tokens;
        this.clientCertificates = clientCertificates;
        this.defaultTenant = Tenant.defaultTenant(defaultQuotas);
    }

    /** Whether calls must carry credentials. */
    public boolean enabled() {
        return tokens != null || clientCertificates;
    }

    /** The tenant of the current call (the {@code default} tenant outside a call, e.g. in unit tests). */
    public static Tenant current() {
        Tenant t = TENANT.get();
        return t == null ? Tenant.defaultTenant(Quotas.DEFAULTS) : t;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        if (OPEN_SERVICES.contains(call.getMethodDescriptor().getServiceName())) {
            return next.startCall(call, headers);
        }
        if (enabled() && tokens != null && authorizationHeaders(headers) > 1) {
            // which one counts would be a guess, and a proxy that adds its own could make it the wrong one
            call.close(Status.UNAUTHENTICATED.withDescription("authorization: " + authorizationHeaders(headers)
                    + " headers (expected: exactly one, Bearer <token>)"), new Metadata());
            return new ServerCall.Listener<>() {};
        }
        Tenant t = enabled() ? authenticate(call, headers) : defaultTenant;
        if (t == null) {
            call.close(Status.UNAUTHENTICATED.withDescription(tokens != null
                    ? "authorization: missing or unknown bearer token (expected: authorization: Bearer <token> with "
                            + "a token of the daemon's --auth-tokens file; the CLI takes --token or ARRAYD_TOKEN)"
                    : "no client certificate (expected: one signed by the daemon's --tls-client-ca)"), new Metadata());
            return new ServerCall.Listener<>() {};
        }
        long limit = t.quotas().messageBytes();
        if (limit == Quotas.UNLIMITED) {
            return Contexts.interceptCall(Context.current().withValue(TENANT, t), call, headers, next);
        }
        MessageQuota<Q, R> quota = new MessageQuota<>(call, t, limit);
        quota.delegate = Contexts.interceptCall(Context.current().withValue(TENANT, t), quota.call, headers, next);
        return quota;
    }

    /**
     * A tenant's message size quota on one call. A message over it ends the call with RESOURCE_EXHAUSTED,
     * and the handler hears of it as of a cancel (so it lets go of what the call held) and hears nothing
     * more from the client; whatever it sends afterwards, its close included, is dropped (a second close
     * of a call is an error in gRPC).
     */
    private static final class MessageQuota<Q, R> extends ServerCall.Listener<Q> {

        private final Tenant tenant;
        private final long limit;
        final ServerCall<Q, R> call;
        ServerCall.Listener<Q> delegate;
        private volatile boolean over; // set once, on the transport thread
        private boolean cancelDelivered;

        MessageQuota(ServerCall<Q, R> raw, Tenant tenant, long limit) {
            this.tenant = tenant;
            this.limit = limit;
            this.call = new ForwardingServerCall.SimpleForwardingServerCall<>(raw) {
                @Override
                public synchronized void sendHeaders(Metadata headers) {
                    if (!over) {
                        super.sendHeaders(headers);
                    }
                }

                @Override
                public synchronized void sendMessage(R message) {
                    if (!over) {
                        super.sendMessage(message);
                    }
                }

                @Override
                public synchronized void close(Status status, Metadata trailers) {
                    if (!over) {
                        super.close(status, trailers);
                    }
                }

                @Override
                public boolean isCancelled() {
                    return over || super.isCancelled();
                }
            };
        }

        @Override
        public void onMessage(Q message) {
            if (over) {
                return;
            }
            int size = message instanceof MessageLite m ? m.getSerializedSize() : 0;
            if (size > limit) {
                synchronized (call) { // not while the handler is sending
                    call.close(Status.RESOURCE_EXHAUSTED.withDescription("tenant " + tenant.name()
                            + ": message size quota " + limit + " bytes exceeded (message of " + size + " bytes)"),
                            new Metadata());
                    over = true;
                }
                cancelOnce();
                return;
            }
            delegate.onMessage(message);
        }

        @Override
        public void onHalfClose() {
            if (!over) {
                delegate.onHalfClose();
            }
        }

        @Override
        public void onReady() {
            if (!over) {
                delegate.onReady();
            }
        }

        @Override
        public void onCancel() {
            cancelOnce();
        }

        @Override
        public void onComplete() {
            if (over) {
                cancelOnce(); // the handler already heard of the end
            } else {
                delegate.onComplete();
            }
        }

        private void cancelOnce() {
            if (!cancelDelivered) {
                cancelDelivered = true;
                delegate.onCancel();
            }
        }
    }

    private static int authorizationHeaders(Metadata headers) {
        Iterable<String> all = headers.getAll(AUTHORIZATION);
        int n = 0;
        if (all != null) {
            for (String ignored : all) {
                n++;
            }
        }
        return n;
    }

    private Tenant authenticate(ServerCall<?, ?> call, Metadata headers) {
        String auth = headers.get(AUTHORIZATION);
        if (tokens != null && auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
            Tenant t = tokens.byToken(auth.substring(7).strip());
            if (t != null) {
                return t;
            }
        }
        if (clientCertificates) {
            String cn = clientCommonName(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
            if (cn != null) {
                Tenant t = tokens == null ? null : tokens.byCertificate(cn);
                if (t != null) {
                    return t;
                }
                try {
                    return new Tenant(cn, 1, defaultTenant.quotas());
                } catch (IllegalArgumentException e) {
                    return null; // a CN that cannot be a tenant name; map it with a cert: line
                }
            }
        }
        return null;
    }

    /** The subject CN of the verified client certificate, or null. */
    static String clientCommonName(SSLSession ssl) {
        if (ssl == null) {
            return null;
        }
        try {
            Certificate[] chain = ssl.getPeerCertificates();
            if (chain.length == 0 || !(chain[0] instanceof X509Certificate x)) {
                return null;
            }
            for (Rdn rdn : new LdapName(x.getSubjectX500Principal().getName()).getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    return rdn.getValue().toString();
                }
            }
            return null;
        } catch (SSLPeerUnverifiedException | InvalidNameException e) {
            return null;
        }
    }
}
