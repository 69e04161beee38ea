package dev.arrayd.server.tracing;

import dev.arrayd.scheduler.CommandKind;
import dev.arrayd.scheduler.CommandObserver;
import dev.arrayd.scheduler.CommandOutcome;
import dev.arrayd.scheduler.DeviceRuntime;
import dev.arrayd.scheduler.Session;
import dev.arrayd.scheduler.StreamKind;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import java.util.concurrent.TimeUnit;

/**
 * One span per command, {@code arrayd <kind>} (launch, copy, fill, upload, download, marker), from its
 * submission to its end, a child of the trace context of the call that submitted it, with two children:
 * {@code queue} (waiting for its dependencies and its stream) and {@code device} (its device time). The
 * span carries the kind, kernel, device, stream kind, outcome and bytes moved; a command that did not
 * succeed has status ERROR with its outcome. Recorded when the command ends, with its real times (the
 * sampler decides then, from the parent's decision or the trace id).
 */
final class CommandSpans {

    static final AttributeKey<String> KIND = AttributeKey.stringKey("arrayd.command.kind");
    static final AttributeKey<String> KERNEL = AttributeKey.stringKey("arrayd.kernel");
    static final AttributeKey<String> DEVICE = AttributeKey.stringKey("arrayd.device");
    static final AttributeKey<String> STREAM = AttributeKey.stringKey("arrayd.stream.kind");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("arrayd.outcome");
    static final AttributeKey<String> CLIENT = AttributeKey.stringKey("arrayd.client");
    static final AttributeKey<Long> BYTES = AttributeKey.longKey("arrayd.bytes");

    private final Tracer tracer;

    CommandSpans(Tracer tracer) {
        this.tracer = tracer;
    }

    /** The observer of one session's commands. */
    CommandObserver forSession(Session session) {
        String client = session.clientName();
        return new CommandObserver() {
            @Override
            public Object commandSubmitted() {
                return Context.current();
            }

            @Override
            public void commandFinished(CommandKind kind, String kernel, DeviceRuntime device, StreamKind stream,
                    CommandOutcome outcome, long waitNanos, long deviceNanos, long bytes, Object submission) {
                record(submission instanceof Context c ? c : Context.root(), client, kind, kernel, device, stream,
                        outcome, waitNanos, deviceNanos, bytes);
            }
        };
    }

    void record(Context parent, String client, CommandKind kind, String kernel, DeviceRuntime device,
            StreamKind stream, CommandOutcome outcome, long waitNanos, long deviceNanos, long bytes) {
        long end = epochNanos();
        long start = end - waitNanos - deviceNanos;
        Span span = tracer.spanBuilder("arrayd " + kind.label()).setParent(parent).setSpanKind(SpanKind.INTERNAL)
                .setStartTimestamp(start, TimeUnit.NANOSECONDS).startSpan();
        if (!span.isRecording()) {
            return; // not sampled
        }
        span.setAttribute(KIND, kind.label());
        span.setAttribute(DEVICE, device.id().toString());
        span.setAttribute(STREAM, stream.label());
        span.setAttribute(OUTCOME, outcome.label());
        span.setAttribute(CLIENT, client);
        if (kernel != null) {
            span.setAttribute(KERNEL, kernel);
        }
        if (bytes > 0) {
            span.setAttribute(BYTES, bytes);
        }
        if (outcome != CommandOutcome.SUCCEEDED) {
            span.setStatus(StatusCode.ERROR, outcome.label());
        }
        Context inside = parent.with(span);
        tracer.spanBuilder("queue").setParent(inside).setStartTimestamp(start, TimeUnit.NANOSECONDS).startSpan()
                .end(start + waitNanos, TimeUnit.NANOSECONDS);
        if (deviceNanos > 0) {
            tracer.spanBuilder("device").setParent(inside).setStartTimestamp(end - deviceNanos, TimeUnit.NANOSECONDS)
                    .startSpan().end(end, TimeUnit.NANOSECONDS);
        }
        span.end(end, TimeUnit.NANOSECONDS);
    }

    private static long epochNanos() {
        java.time.Instant now = java.time.Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }
}
