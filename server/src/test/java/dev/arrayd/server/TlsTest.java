package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.proto.v1.DeviceServiceGrpc;
import dev.arrayd.proto.v1.ListDevicesRequest;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** TLS and mutual TLS from PEM files made by keytool at test time; the client certificate's CN is the tenant. */
class TlsTest {

    @TempDir
    static Path dir;
    static TestCertificates certs;

    @BeforeAll
    static void makeCertificates() throws Exception {
        certs = new TestCertificates(dir, "carol");
    }

    static ArraydServer start(SecurityOptions sec) throws Exception {
        return new ArraydServer(ServerOptions.defaults().withPort(0).withMetricsPort(-1).withCpuMemoryBytes(64L << 20),
                sec, Clock.SYSTEM, null);
    }

    static ManagedChannel channel(int port, boolean clientCert) throws Exception {
        SslContextBuilder ssl = GrpcSslContexts.forClient().trustManager(certs.pem("server").toFile());
        if (clientCert) {
            ssl.keyManager(certs.pem("carol").toFile(), certs.key("carol").toFile());
        }
        return NettyChannelBuilder.forAddress("localhost", port).sslContext(ssl.build()).build();
    }

    @Test
    void tlsServesEncryptedCalls() throws Exception {
        try (ArraydServer server = start(SecurityOptions.NONE.withTls(certs.pem("server"), certs.key("server"), null))) {
            ManagedChannel ch = channel(server.port(), false);
            try {
                assertTrue(DeviceServiceGrpc.newBlockingStub(ch).listDevices(ListDevicesRequest.getDefaultInstance())
                        .getDevicesCount() > 0);
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void mutualTlsNamesTheTenantAfterTheClientCertificate() throws Exception {
        try (ArraydServer server = start(SecurityOptions.NONE.withTls(certs.pem("server"), certs.key("server"),
                certs.pem("carol")))) {
            ManagedChannel with = channel(server.port(), true);
            ManagedChannel without = channel(server.port(), false);
            try {
                SessionServiceGrpc.newBlockingStub(with).openSession(OpenSessionRequest.getDefaultInstance());
                assertEquals("carol", server.scheduler().sessions().iterator().next().tenant());
                StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> DeviceServiceGrpc
                        .newBlockingStub(without).listDevices(ListDevicesRequest.getDefaultInstance()));
                assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), "handshake refused: " + e.getStatus());
            } finally {
                with.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                without.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}
