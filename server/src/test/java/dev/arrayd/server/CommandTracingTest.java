package dev.arrayd.server;

import static dev.arrayd.server.Protos.buf;
import static dev.arrayd.server.Protos.f32;
import static dev.arrayd.server.Protos.i32;
import static dev.arrayd.server.Protos.launch;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.proto.v1.Fill;
import dev.arrayd.proto.v1.Scalar;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.WaitEventsRequest;
import dev.arrayd.server.tracing.MemorySpanExporterProvider;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * With {@code tracing} on, each command becomes a span of the trace its call carried (W3C traceparent),
 * with queue and device children; set up through OpenTelemetry's autoconfiguration like in production,
 * with an in-memory exporter found by the same SPI as the OTLP one.
 */
class CommandTracingTest {

    static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    static final String PARENT = "00f067aa0ba902b7";

    @Test
    void commandsBecomeSpansOfTheClientsTrace() throws Exception {
        Map<String, String> props = Map.of("otel.traces.exporter", MemorySpanExporterProvider.NAME,
                "otel.traces.sampler", "parentbased_traceidratio", "otel.traces.sampler.arg", "0");
        props.forEach(System::setProperty);
        MemorySpanExporterProvider.SPANS.reset();
        try {
            try (ServerFixture f = new ServerFixture(ServerOptions.defaults().withPort(0).withAllowNativeSource(true)
                    .withCpuMemoryBytes(64L << 20).withTracing(true))) {
                String s = f.openSession();
                long vadd = f.kernels.compile(Protos.compile(s, Protos.VADD, Protos.VADD_SIG)).getModules(0)
                        .getKernels(0).getKernel();
                long a = f.buffers.createBuffer(f32(s, 16)).getBuffer().getBuffer();
                Metadata traced = new Metadata();
                traced.put(Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER),
                        "00-" + TRACE + "-" + PARENT + "-01");
                var exec = f.exec.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(traced));
                var events = exec.submit(SubmitRequest.newBuilder().setSession(s)
                        .addCommands(dev.arrayd.proto.v1.Command.newBuilder().setFill(Fill.newBuilder().setBuffer(a)
                                .setValue(Scalar.newBuilder().setF32(1))))
                        .addCommands(launch(0, vadd, 16, buf(a), buf(a), buf(a), i32(16))).build()).getEventsList();
                f.exec.waitEvents(WaitEventsRequest.newBuilder().setSession(s).addAllEvents(events).build());
                // a call without a trace context: a root span, which this sampler (ratio 0) drops
                var untraced = f.exec.submit(SubmitRequest.newBuilder().setSession(s)
                        .addCommands(dev.arrayd.proto.v1.Command.newBuilder().setFill(Fill.newBuilder().setBuffer(a)
                                .setValue(Scalar.newBuilder().setF32(2)))).build()).getEventsList();
                f.exec.waitEvents(WaitEventsRequest.newBuilder().setSession(s).addAllEvents(untraced).build());
            } // closing the server flushes the exporter
            List<SpanData> spans = MemorySpanExporterProvider.SPANS.getFinishedSpanItems();
            Map<String, List<SpanData>> byName = spans.stream().collect(Collectors.groupingBy(SpanData::getName));
            assertEquals(1, byName.getOrDefault("arrayd fill", List.of()).size(), "spans: " + byName.keySet());
            SpanData fill = byName.get("arrayd fill").getFirst();
            SpanData launch = byName.get("arrayd launch").getFirst();
            for (SpanData command : List.of(fill, launch)) {
                assertEquals(TRACE, command.getTraceId());
                assertEquals(PARENT, command.getParentSpanId(), "a child of the client's span");
                assertEquals("cpu:0", command.getAttributes().get(AttributeKey.stringKey("arrayd.device")));
                assertEquals("succeeded", command.getAttributes().get(AttributeKey.stringKey("arrayd.outcome")));
                assertEquals(StatusCode.UNSET, command.getStatus().getStatusCode());
                List<SpanData> children = spans.stream().filter(x -> x.getParentSpanId().equals(command.getSpanId()))
                        .toList();
                assertEquals(List.of("device", "queue"), children.stream().map(SpanData::getName).sorted().toList());
                for (SpanData c : children) {
                    assertTrue(c.getStartEpochNanos() >= command.getStartEpochNanos()
                            && c.getEndEpochNanos() <= command.getEndEpochNanos(), c.getName() + " inside its command");
                }
            }
            assertEquals("vadd", launch.getAttributes().get(AttributeKey.stringKey("arrayd.kernel")));
            assertEquals("arrayd", launch.getResource().getAttribute(AttributeKey.stringKey("service.name")));
        } finally {
            props.keySet().forEach(System::clearProperty);
        }
    }
}
