package dev.arrayd.server.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Text-to-value functions for config keys. Each throws IllegalArgumentException for bad text. */
public final class Parsers {

    private static final Pattern DURATION = Pattern.compile("(\\d{1,12})(ms|s|m)");
    private static final Pattern BYTES = Pattern.compile("(\\d{1,19})\\s*(B|KiB|MiB|GiB|TiB)?");

    private Parsers() {}

    static Function<String, Integer> intIn(int min, int max) {
        return t -> {
            long v;
            try {
                v = Long.parseLong(t);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not an integer");
            }
            if (v < min || v > max) {
                throw new IllegalArgumentException("out of range");
            }
            return (int) v;
        };
    }

    /** An integer that is one of {@code allowed}. */
    static Function<String, Integer> intOf(Set<Integer> allowed) {
        return t -> {
            int v = intIn(Integer.MIN_VALUE, Integer.MAX_VALUE).apply(t);
            if (!allowed.contains(v)) {
                throw new IllegalArgumentException("not one of the values");
            }
            return v;
        };
    }

    static Function<String, Long> longIn(long min, long max) {
        return t -> {
            long v;
            try {
                v = Long.parseLong(t);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not an integer");
            }
            if (v < min || v > max) {
                throw new IllegalArgumentException("out of range");
            }
            return v;
        };
    }

    /** {@code 268435456}, {@code 256MiB}, {@code 1 GiB} (binary units). */
    public static Function<String, Long> bytes(long min, long max) {
        return t -> {
            Matcher m = BYTES.matcher(t);
            if (!m.matches()) {
                throw new IllegalArgumentException("not a byte count");
            }
            int shift = switch (m.group(2) == null ? "B" : m.group(2)) {
                case "KiB" -> 10;
                case "MiB" -> 20;
                case "GiB" -> 30;
                case "TiB" -> 40;
                default -> 0;
            };
            long v;
            try {
                v = Long.parseLong(m.group(1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("too large");
            }
            if (v > (Long.MAX_VALUE >> shift)) {
                throw new IllegalArgumentException("too large");
            }
            v <<= shift;
            if (v < min || v > max) {
                throw new IllegalArgumentException("out of range");
            }
            return v;
        };
    }

    /** {@code 500ms}, {@code 25s}, {@code 2m}: a unit is required. */
    static Function<String, Duration> duration(Duration min, Duration max) {
        return t -> {
            Matcher m = DURATION.matcher(t);
            if (!m.matches()) {
                throw new IllegalArgumentException("not a duration");
            }
            long n = Long.parseLong(m.group(1));
            Duration d = switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                default -> Duration.ofMinutes(n);
            };
            if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
                throw new IllegalArgumentException("out of range");
            }
            return d;
        };
    }

    static Function<String, Boolean> bool() {
        return t -> switch (t.toLowerCase(Locale.ROOT)) {
            case "true", "yes", "on", "1" -> true;
            case "false", "no", "off", "0" -> false;
            default -> throw new IllegalArgumentException("");
        };
    }

    static Function<String, String> oneOf(Set<String> allowed) {
        return t -> {
            String v = t.toLowerCase(Locale.ROOT);
            if (!allowed.contains(v)) {
                throw new IllegalArgumentException("");
            }
            return v;
        };
    }

    static Function<String, String> text(boolean mayBeEmpty) {
        return t -> {
            if (!mayBeEmpty && t.isEmpty()) {
                throw new IllegalArgumentException("empty");
            }
            return t;
        };
    }

    /** Empty = none (null). */
    static Function<String, Path> optionalPath() {
        return t -> t.isEmpty() ? null : Path.of(t);
    }
}
