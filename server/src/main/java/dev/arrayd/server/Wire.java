package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Quote;
import java.util.List;

/**
 * Unsigned and signed wire values checked as what they are before any other code sees them. Java reads a
 * {@code uint64} of 2^63 or more as a negative {@code long}, and a {@code uint32} of 2^31 or more as a negative
 * {@code int}: such a value is refused here, shown as the client wrote it ({@code 18446744073709551615}, never
 * {@code -1}), so that everything behind the decoders works with non-negative numbers only.
 */
final class Wire {

    private Wire() {}

    /** A uint64 byte or element offset or count: OUT_OF_RANGE from 2^63 on (beyond any buffer). */
    static long size(long raw, String field) {
        if (raw < 0) {
            throw new ArraydException(ErrorCode.OUT_OF_RANGE, field + ": " + Quote.unsigned(raw)
                    + " (expected: within a buffer, below 2^62 bytes)");
        }
        return raw;
    }

    /** A uint64 event id that names an event (a wait, a query): INVALID_ARGUMENT from 2^63 on. */
    static long event(long raw, String field) {
        return nonNegative(raw, field, "an event id, 1 <= id < 2^62, or one the daemon assigned below 2^63");
    }

    /** {@link #event} of each, as {@code field[i]}. */
    static long[] events(List<Long> raw, String field) {
        long[] out = new long[raw.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = event(raw.get(i), field + "[" + i + "]");
        }
        return out;
    }

    /** A uint64 event id a command will signal: 0 (assign one) or {@code 1 <= id < 2^62}. */
    static long newEvent(long raw, String field) {
        return nonNegative(raw, field, "1 <= id < 2^62, or 0 to have one assigned");
    }

    /** {@code raw} unless it is 2^63 or more (negative in Java): INVALID_ARGUMENT showing it unsigned. */
    private static long nonNegative(long raw, String field, String expected) {
        if (raw < 0) {
            throw ArraydException.invalid(field + ": " + Quote.unsigned(raw) + " (expected: " + expected + ")");
        }
        return raw;
    }

    /** Launch grid extents (uint64): INVALID_ARGUMENT from 2^63 on, as {@code field[i]}. */
    static long[] dims(List<Long> raw, String field) {
        long[] out = new long[raw.size()];
        for (int i = 0; i < out.length; i++) {
            long v = raw.get(i);
            if (v < 0) {
                throw ArraydException.invalid(field + "[" + i + "]: " + Quote.unsigned(v)
                        + " (expected: at most the device's limit, far below 2^63)");
            }
            out[i] = v;
        }
        return out;
    }

    /** A uint32 index or count: INVALID_ARGUMENT above {@code max}. */
    static int index(int raw, String field, int max, String expected) {
        if (Integer.compareUnsigned(raw, max) > 0) {
            throw ArraydException.invalid(field + ": " + Quote.unsigned(raw) + " (expected: " + expected + ")");
        }
        return raw;
    }

    /** A uint32 read as an unsigned long. */
    static long u32(int raw) {
        return Integer.toUnsignedLong(raw);
    }

    /** A uint64 that means "at most this much" read with saturation: 2^63 and more are {@link Long#MAX_VALUE}. */
    static long saturated(long raw) {
        return raw < 0 ? Long.MAX_VALUE : raw;
    }

    /** {@code deadline_unix_nanos}: 0 for none, or a time after 1970 in ns since the epoch. */
    static long deadline(long raw, String field) {
        if (raw < 0) {
            throw ArraydException.invalid(field + ": " + raw
                    + " (expected: 0 for no deadline, or nanoseconds since 1970-01-01 UTC)");
        }
        return raw;
    }
}
