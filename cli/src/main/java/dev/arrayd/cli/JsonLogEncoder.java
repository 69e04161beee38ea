package dev.arrayd.cli;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.encoder.EncoderBase;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.TreeMap;

/**
 * One JSON object per log line, with the field names the common log shippers read without mapping
 * (Fluent Bit, Vector, Loki, Elastic, Google Cloud Logging): {@code timestamp} (ISO-8601 in UTC,
 * milliseconds), {@code level}, {@code message}, {@code logger}, {@code thread}, the MDC entries at top
 * level ({@code request_id}), and {@code stack_trace} when the event carries an exception.
 */
final class JsonLogEncoder extends EncoderBase<ILoggingEvent> {

    private static final byte[] NOTHING = new byte[0];
    /** Fields this encoder writes itself; an MDC entry of the same name is left out. */
    private static final java.util.Set<String> OWN = java.util.Set.of("timestamp", "level", "message", "logger",
            "thread", "stack_trace");

    @Override
    public byte[] headerBytes() {
        return NOTHING;
    }

    @Override
    public byte[] encode(ILoggingEvent e) {
        StringBuilder b = new StringBuilder(256);
        b.append("{\"timestamp\":\"")
                .append(DateTimeFormatter.ISO_INSTANT.format(Instant.ofEpochMilli(e.getTimeStamp())))
                .append('"');
        field(b, "level", e.getLevel().toString());
        field(b, "message", e.getFormattedMessage());
        field(b, "logger", e.getLoggerName());
        field(b, "thread", e.getThreadName());
        Map<String, String> mdc = e.getMDCPropertyMap();
        if (mdc != null && !mdc.isEmpty()) {
            new TreeMap<>(mdc).forEach((k, v) -> {
                if (!OWN.contains(k)) {
                    field(b, k, v);
                }
            });
        }
        IThrowableProxy t = e.getThrowableProxy();
        if (t != null) {
            field(b, "stack_trace", ThrowableProxyUtil.asString(t));
        }
        return b.append("}\n").toString().getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public byte[] footerBytes() {
        return NOTHING;
    }

    private static void field(StringBuilder b, String name, String value) {
        b.append(',');
        string(b, name);
        b.append(':');
        if (value == null) {
            b.append("null");
        } else {
            string(b, value);
        }
    }

    /** A JSON string: quotes, backslashes and control characters escaped (RFC 8259). */
    static void string(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }
}
