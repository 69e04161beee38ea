package dev.arrayd.devices.api;

import java.util.List;

/**
 * Values a client sent, shown in a message: bounded, whatever their size, and printable. Every error message
 * that repeats user input quotes it through here, so that a 1 MB name or a list of 100,000 dims never
 * travels back whole (a gRPC status travels in a trailer of a few KiB).
 *
 * <ul>
 *   <li>{@link #string}: {@code "cpu:0"}; a longer one as its first {@value #MAX_CHARS} characters,
 *       {@code "aaaa…" (100000 characters)}; control and non-ASCII characters as {@code \}{@code uXXXX}.</li>
 *   <li>{@link #longs} / {@link #list}: {@code [1, 2, 3]}; a longer one as its first {@value #MAX_ITEMS}
 *       values, {@code [1, 1, 1, 1, 1, 1, 1, 1, …] (100000 values)}.</li>
 *   <li>{@link #unsigned}: a uint64 as the client wrote it ({@code 18446744073709551615}, not {@code -1}).</li>
 * </ul>
 */
public final class Quote {

    /** Characters of a string shown before it is cut. */
    public static final int MAX_CHARS = 64;
    /** Values of a list shown before it is cut. */
    public static final int MAX_ITEMS = 8;

    private Quote() {}

    /** {@code "text"}, bounded and escaped; {@code null} for null. */
    public static String string(String s) {
        if (s == null) {
            return "null";
        }
        int shown = Math.min(s.length(), MAX_CHARS);
        StringBuilder b = new StringBuilder(shown + 24).append('"');
        for (int i = 0; i < shown; i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        if (shown < s.length()) {
            return b.append("…\" (").append(s.length()).append(" characters)").toString();
        }
        return b.append('"').toString();
    }

    /** {@code [1, 2, 3]}, the first {@value #MAX_ITEMS} values and the count of a longer array. */
    public static String longs(long[] values) {
        StringBuilder b = new StringBuilder("[");
        int shown = Math.min(values.length, MAX_ITEMS);
        for (int i = 0; i < shown; i++) {
            b.append(i == 0 ? "" : ", ").append(values[i]);
        }
        return close(b, shown, values.length);
    }

    /** {@code [a, b]} of the values' own strings (each quoted as {@link #string} if longer than it allows). */
    public static String list(List<?> values) {
        StringBuilder b = new StringBuilder("[");
        int shown = Math.min(values.size(), MAX_ITEMS);
        for (int i = 0; i < shown; i++) {
            String v = String.valueOf(values.get(i));
            b.append(i == 0 ? "" : ", ").append(v.length() > MAX_CHARS ? string(v) : v);
        }
        return close(b, shown, values.size());
    }

    /** A uint64 wire value as unsigned decimal. */
    public static String unsigned(long value) {
        return Long.toUnsignedString(value);
    }

    /** A uint32 wire value as unsigned decimal. */
    public static String unsigned(int value) {
        return Integer.toUnsignedString(value);
    }

    private static String close(StringBuilder b, int shown, int size) {
        if (shown < size) {
            return b.append(shown == 0 ? "…] (" : ", …] (").append(size).append(" values)").toString();
        }
        return b.append(']').toString();
    }
}
