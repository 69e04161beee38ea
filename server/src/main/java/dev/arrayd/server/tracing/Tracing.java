package dev.arrayd.server.tracing;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * OpenTelemetry for the daemon: off, or an SDK set up the standard way from the {@code OTEL_*}
 * environment variables and {@code otel.*} system properties (exporter, endpoint, protocol, sampler,
 * resource attributes), over defaults of arrayd's own: service name {@code arrayd}, OTLP/HTTP traces only
 * (no OpenTelemetry metrics or logs: Prometheus and the log lines carry those), and a parent-based
 * sampler that keeps 1% of the traces a client did not sample itself.
 */
public final class Tracing implements AutoCloseable {

    static final String INSTRUMENTATION = "dev.arrayd.server";

    /** arrayd's defaults, below whatever OTEL_* / otel.* set. */
    static final Map<String, String> DEFAULTS = Map.of(
            "otel.service.name", "arrayd",
            "otel.traces.exporter", "otlp",
            // the JDK's HTTP client sends; OTLP over gRPC would need another sender library
            "otel.exporter.otlp.protocol", "http/protobuf",
            "otel.metrics.exporter", "none",
            "otel.logs.exporter", "none",
            "otel.traces.sampler", "parentbased_traceidratio",
            "otel.traces.sampler.arg", "0.01");

    private final OpenTelemetrySdk sdk; // null when off
    private final OpenTelemetry otel;

    private Tracing(OpenTelemetrySdk sdk) {
        this.sdk = sdk;
        this.otel = sdk == null ? OpenTelemetry.noop() : sdk;
    }

    public static Tracing off() {
        return new Tracing(null);
    }

    /** An SDK from the environment over {@link #DEFAULTS}; its resource says which arrayd version runs. */
    public static Tracing fromEnvironment(String version) {
        try {
            OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder()
                    .addPropertiesSupplier(() -> DEFAULTS)
                    .addResourceCustomizer((resource, config) -> resource.merge(Resource.create(Attributes.of(
                            AttributeKey.stringKey("service.version"), version))))
                    .build().getOpenTelemetrySdk();
            return new Tracing(sdk);
        } catch (io.opentelemetry.sdk.autoconfigure.spi.ConfigurationException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new IllegalArgumentException("tracing: the OTEL_* settings do not configure: " + e.getMessage()
                    + (cause != e ? " (" + cause.getMessage() + ")" : ""), e);
        }
    }

    public boolean enabled() {
        return sdk != null;
    }

    Tracer tracer() {
        return otel.getTracer(INSTRUMENTATION);
    }

    TextMapPropagator propagator() {
        return otel.getPropagators().getTextMapPropagator();
    }

    /** Exports what is pending (for up to 5 s) and stops. */
    @Override
    public void close() {
        if (sdk != null) {
            sdk.shutdown().join(5, TimeUnit.SECONDS);
        }
    }
}
