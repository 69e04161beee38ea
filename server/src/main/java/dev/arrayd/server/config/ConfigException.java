package dev.arrayd.server.config;

/**
 * A setting that cannot be used. The message names the key, the value, where it came from and what
 * was expected, e.g. {@code metrics-port: "abc" (from environment ARRAYD_METRICS_PORT; expected: an
 * integer in -1..65535)}. The CLI prints it and exits with status 2.
 */
public final class ConfigException extends RuntimeException {

    public ConfigException(String message) {
        super(message);
    }
}
