package dev.arrayd.server;

import com.google.protobuf.Duration;
import com.google.protobuf.Timestamp;
import dev.arrayd.devices.api.ArraydException;

/**
 * {@code google.protobuf.Duration} and {@code Timestamp} fields to and from the daemon's nanoseconds and
 * milliseconds. Values outside the types' documented ranges (or with nanos of the wrong size or sign) are
 * INVALID_ARGUMENT naming the field and the value.
 */
final class ProtoTime {

    /** Timestamp's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z. */
    static final long MIN_TIMESTAMP_SECONDS = -62_135_596_800L;
    static final long MAX_TIMESTAMP_SECONDS = 253_402_300_799L;
    /** Duration's range: about 10,000 years either way. */
    static final long MAX_DURATION_SECONDS = 315_576_000_000L;
    private static final long NANOS = 1_000_000_000L;

    private ProtoTime() {}

    /**
     * A deadline: 0 when unset, else nanoseconds since 1970 — 1 for any time before then (long past), and
     * {@code Long.MAX_VALUE} beyond year 2262 (never reached).
     */
    static long unixNanos(boolean set, Timestamp t, String field) {
        if (!set) {
            return 0;
        }
        if (t.getSeconds() < MIN_TIMESTAMP_SECONDS || t.getSeconds() > MAX_TIMESTAMP_SECONDS
                || t.getNanos() < 0 || t.getNanos() >= NANOS) {
            throw ArraydException.invalid(field + ": {seconds: " + t.getSeconds() + ", nanos: " + t.getNanos()
                    + "} (expected: seconds from " + MIN_TIMESTAMP_SECONDS + " to " + MAX_TIMESTAMP_SECONDS
                    + ", nanos from 0 to 999999999)");
        }
        if (t.getSeconds() < 0) {
            return 1;
        }
        if (t.getSeconds() > (Long.MAX_VALUE - t.getNanos()) / NANOS) {
            return Long.MAX_VALUE;
        }
        return t.getSeconds() * NANOS + t.getNanos();
    }

    /** A non-negative duration in whole milliseconds (finer parts dropped, saturating). */
    static long millis(Duration d, String field) {
        long s = d.getSeconds();
        int n = d.getNanos();
        if (s < 0 || n < 0 || s > MAX_DURATION_SECONDS || n >= NANOS) {
            throw ArraydException.invalid(field + ": {seconds: " + s + ", nanos: " + n
                    + "} (expected: a duration of zero or more, seconds up to " + MAX_DURATION_SECONDS
                    + ", nanos from 0 to 999999999)");
        }
        return s * 1000 + n / 1_000_000;
    }

    static Duration ofMillis(long millis) {
        return Duration.newBuilder().setSeconds(millis / 1000).setNanos((int) (millis % 1000) * 1_000_000).build();
    }

    static Duration ofNanos(long nanos) {
        return Duration.newBuilder().setSeconds(nanos / NANOS).setNanos((int) (nanos % NANOS)).build();
    }
}
