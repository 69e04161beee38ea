package dev.arrayd.server;

import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;

/**
 * Bounds a status description (or a completion's message) to what a client can receive. gRPC sends a status
 * description in a trailer, percent-encoding every byte outside printable ASCII, and clients refuse trailers
 * over a few KiB ({@code RESOURCE_EXHAUSTED: received metadata size exceeds limit}), which would hide the
 * real status. A longer description is cut, and says so: {@code … (cut: 100123 characters in all)}.
 * {@link #interceptor()} applies it to every status the daemon sends, whichever code made it.
 */
final class StatusText {

    /** Most bytes of a description once percent-encoded (clients accept 8 KiB of metadata by default). */
    static final int MAX_ENCODED_BYTES = 4096;

    private StatusText() {}

    /** Bounds the description of every status a call ends with. */
    static ServerInterceptor interceptor() {
        return FinalStatus.rewriting((status, trailers) -> {
            String d = status.getDescription();
            String bounded = bound(d);
            return bounded == d ? status : status.withDescription(bounded);
        });
    }

    /** {@code text} if it fits, else its longest prefix that fits with the note of the cut. */
    static String bound(String text) {
        if (text == null || text.length() * 9 <= MAX_ENCODED_BYTES) {
            return text; // 9 encoded bytes per UTF-16 char at most (%XX for each of 3 UTF-8 bytes)
        }
        if (encodedBytes(text, text.length()) <= MAX_ENCODED_BYTES) {
            return text;
        }
        String note = "… (cut: " + text.length() + " characters in all)";
        int budget = MAX_ENCODED_BYTES - encodedBytes(note, note.length());
        int used = 0;
        int end = 0;
        while (end < text.length()) {
            int cp = text.codePointAt(end);
            int cost = encodedBytes(new String(Character.toChars(cp)), Character.charCount(cp));
            if (used + cost > budget) {
                break;
            }
            used += cost;
            end += Character.charCount(cp);
        }
        return text.substring(0, end) + note;
    }

    /** The size of the first {@code n} chars of {@code s} as gRPC percent-encodes a status description. */
    static int encodedBytes(String s, int n) {
        int size = 0;
        for (byte b : s.substring(0, n).getBytes(StandardCharsets.UTF_8)) {
            size += b >= ' ' && b < '~' && b != '%' ? 1 : 3;
        }
        return size;
    }
}
