package dev.arrayd.cli;

import dev.arrayd.client.ArraydClient;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Options every client subcommand shares: where the daemon is, how to authenticate, and whether to
 * speak TLS.
 */
final class ClientOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Option(names = "--target", description = "Daemon address: host:port, or unix:///path for its Unix domain "
            + "socket (serve --uds) (default: ${DEFAULT-VALUE}).",
            defaultValue = Target.DEFAULT)
    String target;

    @Option(names = "--token", description = "Bearer token (default: the ARRAYD_TOKEN environment variable).",
            defaultValue = "${env:ARRAYD_TOKEN}")
    String token;

    /** The PEM file of trusted CA certificates, or null: plaintext. */
    private Path tlsCa;

    @Option(names = "--tls-ca", paramLabel = "FILE", defaultValue = "${env:ARRAYD_TLS_CA}",
            description = "Connect with TLS, trusting the CA certificates of this PEM file (the CA of the daemon's "
                    + "--tls-cert, or that certificate itself if self-signed). Default: the ARRAYD_TLS_CA environment "
                    + "variable; plaintext when neither is set.")
    void tlsCa(String file) {
        if (file == null || file.isBlank()) {
            tlsCa = null;
            return;
        }
        Path p = Path.of(file);
        String problem;
        try (InputStream in = Files.newInputStream(p)) {
            int n = CertificateFactory.getInstance("X.509").generateCertificates(in).size();
            problem = n > 0 ? null : "no certificate in it";
        } catch (IOException e) {
            problem = "cannot read it: " + e;
        } catch (CertificateException e) {
            problem = "not PEM certificates: " + e.getMessage();
        }
        if (problem != null) {
            throw new ParameterException(command.commandLine(), "--tls-ca: " + file
                    + " (expected: a readable PEM file of CA certificates; " + problem + ")");
        }
        tlsCa = p;
    }

    ArraydClient connect() {
        Target t = Target.parse(target);
        ArraydClient.Builder b = ArraydClient.builder().target(t.toString());
        if (tlsCa != null) {
            b.tls(tlsCa);
        }
        if (token != null && !token.isBlank()) {
            b.bearerToken(token);
        }
        return b.build();
    }

    /** A plain channel to the daemon, for the tools that call services the Java client does not wrap. */
    ManagedChannel channel() {
        Target t = Target.parse(target);
        ManagedChannelBuilder<?> b = Grpc.newChannelBuilder(t.toString(), credentials());
        if (token != null && !token.isBlank()) {
            Metadata h = new Metadata();
            h.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
            b.intercept(MetadataUtils.newAttachHeadersInterceptor(h));
        }
        return b.build();
    }

    private ChannelCredentials credentials() {
        if (tlsCa == null) {
            return InsecureChannelCredentials.create();
        }
        try {
            return TlsChannelCredentials.newBuilder().trustManager(tlsCa.toFile()).build();
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("--tls-ca: " + tlsCa + " (expected: a PEM file of CA certificates; "
                    + e.getMessage() + ")", e);
        }
    }
}
