package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Quote;

/**
 * Free-form text a client names its things with: a session's client name and a buffer's label. Both are
 * repeated in log lines, metrics labels and in the messages of other errors (a cancelled command names its
 * session; a failed command its buffer), so they are bounded when given, and hold no control characters
 * (a newline would forge a log line).
 */
final class FreeText {

    /** Longest client name of a session. */
    static final int MAX_CLIENT_NAME = 128;
    /** Longest label of a buffer. */
    static final int MAX_LABEL = 256;

    private FreeText() {}

    /** INVALID_ARGUMENT naming {@code field} unless {@code text} has at most {@code max} characters, none a control. */
    static String check(String text, String field, int max) {
        if (text.length() > max) {
            throw ArraydException.invalid(field + ": " + Quote.string(text) + " (expected: at most " + max + " characters)");
        }
        for (int i = 0; i < text.length(); i++) {
            if (Character.isISOControl(text.charAt(i))) {
                throw ArraydException.invalid(field + ": " + Quote.string(text) + " (expected: no control characters; "
                        + "character " + i + " is one)");
            }
        }
        return text;
    }
}
