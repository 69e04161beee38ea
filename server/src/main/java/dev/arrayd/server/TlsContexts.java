package dev.arrayd.server;

import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import javax.net.ssl.SSLException;

/** The server's TLS context from PEM files: its certificate chain and key, and for mutual TLS the client CA. */
final class TlsContexts {

    private TlsContexts() {}

    static SslContext server(SecurityOptions sec) {
        try {
            SslContextBuilder b = GrpcSslContexts.forServer(sec.tlsCert().toFile(), sec.tlsKey().toFile());
            if (sec.tlsClientCa() != null) {
                // REQUIRE: a client without a certificate the CA signed never completes the handshake
                b.trustManager(sec.tlsClientCa().toFile()).clientAuth(ClientAuth.REQUIRE);
            }
            return b.build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("tls-cert / tls-key / tls-client-ca: cannot build a TLS context from "
                    + sec.tlsCert() + ", " + sec.tlsKey() + (sec.tlsClientCa() == null ? "" : ", " + sec.tlsClientCa())
                    + " (" + e.getMessage() + "; expected: PEM certificate chain, PEM PKCS#8 key, PEM CA certificates)",
                    e);
        }
    }
}
