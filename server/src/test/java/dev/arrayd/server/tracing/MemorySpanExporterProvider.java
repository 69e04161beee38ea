package dev.arrayd.server.tracing;

import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.autoconfigure.spi.traces.ConfigurableSpanExporterProvider;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.export.SpanExporter;

/** {@code otel.traces.exporter=arrayd-test-memory}: the spans in memory, for the tests (an SPI, as a real exporter is). */
public final class MemorySpanExporterProvider implements ConfigurableSpanExporterProvider {

    public static final String NAME = "arrayd-test-memory";
    public static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();

    @Override
    public SpanExporter createExporter(ConfigProperties config) {
        return new SpanExporter() { // the SDK shuts its exporter down with itself: keep the shared one open
            @Override
            public io.opentelemetry.sdk.common.CompletableResultCode export(
                    java.util.Collection<io.opentelemetry.sdk.trace.data.SpanData> spans) {
                return SPANS.export(spans);
            }

            @Override
            public io.opentelemetry.sdk.common.CompletableResultCode flush() {
                return SPANS.flush();
            }

            @Override
            public io.opentelemetry.sdk.common.CompletableResultCode shutdown() {
                return io.opentelemetry.sdk.common.CompletableResultCode.ofSuccess();
            }
        };
    }

    @Override
    public String getName() {
        return NAME;
    }
}
