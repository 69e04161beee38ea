package dev.arrayd.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CreateBufferRequest;
import dev.arrayd.proto.v1.DataType;
import dev.arrayd.proto.v1.Fill;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.Scalar;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.WaitEventsRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A real daemon with {@code --tracing true} exports its command spans over OTLP/HTTP to the endpoint of
 * {@code OTEL_EXPORTER_OTLP_ENDPOINT} (here a collector stand-in on 127.0.0.1 that keeps the bodies): the
 * client's trace id and the span names arrive in the protobuf payload.
 */
class OtlpExportTest {

    static final String TRACE = "5af7183fb1d4cf5f1ae7d5e0a0c0ffee";

    @Test
    void spansReachTheOtlpEndpoint() throws Exception {
        LinkedBlockingQueue<byte[]> bodies = new LinkedBlockingQueue<>();
        HttpServer collector = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        collector.createContext("/v1/traces", exchange -> {
            bodies.add(exchange.getRequestBody().readAllBytes());
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        collector.start();
        try (DaemonProcess d = new DaemonProcess(Map.of(
                "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:" + collector.getAddress().getPort(),
                "OTEL_BSP_SCHEDULE_DELAY", "100"), "--tracing", "true")) {
            ManagedChannel channel = NettyChannelBuilder.forTarget(d.target()).usePlaintext().build();
            try {
                String s = dev.arrayd.proto.v1.SessionServiceGrpc.newBlockingStub(channel)
                        .openSession(OpenSessionRequest.newBuilder().setClientName("otlp-it").build()).getSession();
                long b = dev.arrayd.proto.v1.BufferServiceGrpc.newBlockingStub(channel).createBuffer(
                        CreateBufferRequest.newBuilder().setSession(s).setDtype(DataType.DATA_TYPE_F32).addDims(8)
                                .build()).getBuffer().getBuffer();
                Metadata traced = new Metadata();
                traced.put(Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER),
                        "00-" + TRACE + "-00f067aa0ba902b7-01");
                var exec = dev.arrayd.proto.v1.ExecutionServiceGrpc.newBlockingStub(channel)
                        .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(traced));
                var events = exec.submit(SubmitRequest.newBuilder().setSession(s).addCommands(Command.newBuilder()
                        .setFill(Fill.newBuilder().setBuffer(b).setValue(Scalar.newBuilder().setF32(3)))).build())
                        .getEventsList();
                exec.waitEvents(WaitEventsRequest.newBuilder().setSession(s).addAllEvents(events).build());
                byte[] traceId = HexFormat.of().parseHex(TRACE);
                boolean found = false;
                while (!found) {
                    byte[] body = bodies.poll(30, TimeUnit.SECONDS);
                    assertTrue(body != null, "no OTLP export within 30 s; daemon output:\n" + d.output());
                    String text = new String(body, StandardCharsets.ISO_8859_1);
                    found = text.contains(new String(traceId, StandardCharsets.ISO_8859_1)) && text.contains("arrayd fill");
                    if (found) {
                        assertTrue(text.contains("arrayd"), "service.name");
                        assertTrue(text.contains("queue") && text.contains("device"), "the child spans");
                    }
                }
            } finally {
                channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
        } finally {
            collector.stop(0);
        }
    }
}
