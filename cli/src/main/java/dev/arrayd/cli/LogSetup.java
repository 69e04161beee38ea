package dev.arrayd.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * Applies {@code log-format} and {@code log-level} over logback.xml (readable lines on stderr), and
 * routes grpc-java's java.util.logging into SLF4J, so every line leaves the same way.
 */
final class LogSetup {

    private LogSetup() {}

    static void apply(String format, String level) {
        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx)) {
            return; // another SLF4J backend on the class path: leave it alone
        }
        ch.qos.logback.classic.Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.toLevel(level, Level.INFO));
        if (!format.equals("json")) {
            return;
        }
        JsonLogEncoder encoder = new JsonLogEncoder();
        encoder.setContext(ctx);
        encoder.start();
        ConsoleAppender<ILoggingEvent> json = new ConsoleAppender<>();
        json.setContext(ctx);
        json.setName("STDERR_JSON");
        json.setTarget("System.err");
        json.setEncoder(encoder);
        json.start();
        root.detachAndStopAllAppenders();
        root.addAppender(json);
    }
}
