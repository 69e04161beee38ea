package dev.arrayd.server.config;

import java.util.Locale;
import java.util.function.Function;

/**
 * One setting (Kafka's {@code *_CONFIG} / {@code *_DEFAULT} / {@code *_DOC} triple in one value): its
 * name, its default, how text becomes a value (and what text is expected), and what it means.
 *
 * <p>The name is used as given in the config file ({@code metrics-port = 7701}), with two dashes as
 * a flag ({@code --metrics-port 7701}) and upper-cased behind {@code ARRAYD_} with underscores as an
 * environment variable ({@code ARRAYD_METRICS_PORT=7701}).
 *
 * @param type         the value's shape in docs, e.g. {@code "int"}, {@code "duration"}
 * @param defaultText  the default, as text (parsed by {@code parser} like any other source)
 * @param parser       text to value; throws {@link IllegalArgumentException} when the text is not valid
 * @param expected     what valid text looks like, for error messages and docs
 * @param doc          what the setting does
 */
public record ConfigKey<T>(String name, String type, String defaultText, Function<String, T> parser, String expected,
        String doc) {

    /** The flag: {@code --name}. */
    public String flag() {
        return "--" + name;
    }

    /** The environment variable: {@code ARRAYD_NAME}. */
    public String envVar() {
        return "ARRAYD_" + name.toUpperCase(Locale.ROOT).replace('-', '_');
    }

    /** Whether the flag may be given without a value (meaning true). */
    public boolean isBoolean() {
        return type.equals("boolean");
    }

    /** Parses {@code text} or explains, naming this key, the value and its origin. */
    public T parse(String text, String origin) {
        try {
            return parser.apply(text.strip());
        } catch (IllegalArgumentException e) {
            String why = e.getMessage() == null || e.getMessage().isBlank() ? "" : e.getMessage() + "; ";
            throw new ConfigException(name + ": \"" + text + "\" (from " + origin + "; " + why + "expected: " + expected + ")");
        }
    }
}
