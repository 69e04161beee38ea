package dev.arrayd.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonLogEncoderTest {

    static String encode(LoggingEvent e) {
        JsonLogEncoder enc = new JsonLogEncoder();
        enc.setContext(new LoggerContext());
        enc.start();
        return new String(enc.encode(e), StandardCharsets.UTF_8);
    }

    static LoggingEvent event(String message, Throwable t, Object... args) {
        return event(Map.of(), message, t, args);
    }

    static LoggingEvent event(Map<String, String> mdc, String message, Throwable t, Object... args) {
        LoggerContext ctx = new LoggerContext();
        LoggingEvent e = new LoggingEvent("dev.arrayd.Test", ctx.getLogger("dev.arrayd.server.Example"), Level.WARN,
                message, t, args);
        e.setTimeStamp(Instant.parse("2026-11-26T12:00:00.123Z").toEpochMilli());
        e.setThreadName("grpc-default-executor-0");
        e.setMDCPropertyMap(mdc);
        return e;
    }

    @Test
    void oneObjectPerLineWithIsoTimestampAndMessageKeys() {
        LoggingEvent e = event(Map.of("request_id", "r-42", "message", "shadowed"),
                "session {} closed: \"{}\"\nnext\tline \u0001", null, "3f9a", "bye\\");
        assertEquals("{\"timestamp\":\"2026-11-26T12:00:00.123Z\",\"level\":\"WARN\","
                + "\"message\":\"session 3f9a closed: \\\"bye\\\\\\\"\\nnext\\tline \\u0001\","
                + "\"logger\":\"dev.arrayd.server.Example\",\"thread\":\"grpc-default-executor-0\","
                + "\"request_id\":\"r-42\"}\n", encode(e));
    }

    @Test
    void anExceptionComesAsOneEscapedStackTrace() {
        String line = encode(event("failed", new IllegalStateException("boom")));
        assertTrue(line.endsWith("}\n") && line.indexOf('\n') == line.length() - 1, line);
        assertTrue(line.contains(",\"stack_trace\":\"java.lang.IllegalStateException: boom\\n\\tat "), line);
    }
}
