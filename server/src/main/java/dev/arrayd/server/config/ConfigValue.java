package dev.arrayd.server.config;

/**
 * The effective value of one key.
 *
 * @param text   the value as given (or the default's text)
 * @param origin the source, with the file or variable name when there is one (for {@code config --print})
 */
public record ConfigValue<T>(ConfigKey<T> key, T value, String text, ConfigSource source, String origin) {}
