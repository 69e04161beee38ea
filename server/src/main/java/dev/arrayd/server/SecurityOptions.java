package dev.arrayd.server;

import dev.arrayd.server.auth.Quotas;
import java.nio.file.Path;

/**
 * Authentication, TLS, quotas and per-session bounds (docs/security.md). Every field is a key of
 * {@link dev.arrayd.server.config.ArraydConfig}.
 *
 * @param authTokens         the token file (token → tenant, weight, quotas), or null for none
 * @param tlsCert            PEM certificate chain of the server, or null for plaintext
 * @param tlsKey             PEM PKCS#8 private key of {@code tlsCert}
 * @param tlsClientCa        PEM CA certificates client certificates must chain to (mutual TLS), or null
 * @param tenantQuotas       quotas of the {@code default} tenant, and defaults for every tenant's
 * @param sessionMaxInFlight commands of one session unanswered before its stream stops reading and
 *                           its unary submits are refused (default 8192)
 */
public record SecurityOptions(Path authTokens, Path tlsCert, Path tlsKey, Path tlsClientCa, Quotas tenantQuotas,
        int sessionMaxInFlight) {

    public static final int DEFAULT_SESSION_MAX_INFLIGHT = 8192;

    public static final SecurityOptions NONE = new SecurityOptions(null, null, null, null, Quotas.DEFAULTS,
            DEFAULT_SESSION_MAX_INFLIGHT);

    public SecurityOptions {
        if ((tlsCert == null) != (tlsKey == null)) {
            throw new IllegalArgumentException("tls-cert and tls-key: give both or neither");
        }
        if (tlsClientCa != null && tlsCert == null) {
            throw new IllegalArgumentException("tls-client-ca: needs tls-cert and tls-key (mutual TLS is TLS)");
        }
        if (sessionMaxInFlight < 1) {
            throw new IllegalArgumentException("session-max-inflight: " + sessionMaxInFlight + " (expected: >= 1)");
        }
    }

    /** Whether callers must prove who they are (a token file or client certificates). */
    public boolean authenticates() {
        return authTokens != null || tlsClientCa != null;
    }

    public SecurityOptions withAuthTokens(Path p) {
        return new SecurityOptions(p, tlsCert, tlsKey, tlsClientCa, tenantQuotas, sessionMaxInFlight);
    }

    public SecurityOptions withTls(Path cert, Path key, Path clientCa) {
        return new SecurityOptions(authTokens, cert, key, clientCa, tenantQuotas, sessionMaxInFlight);
    }

    public SecurityOptions withTenantQuotas(Quotas q) {
        return new SecurityOptions(authTokens, tlsCert, tlsKey, tlsClientCa, q, sessionMaxInFlight);
    }

    public SecurityOptions withSessionMaxInFlight(int n) {
        return new SecurityOptions(authTokens, tlsCert, tlsKey, tlsClientCa, tenantQuotas, n);
    }
}
