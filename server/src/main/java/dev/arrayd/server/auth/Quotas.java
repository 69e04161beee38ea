package dev.arrayd.server.auth;

import dev.arrayd.server.config.Parsers;
import java.util.Locale;
import java.util.function.Function;

/**
 * What one tenant may hold at once. By default ({@link #DEFAULTS}) {@value #DEFAULT_STREAMS} streams and
 * {@link #UNLIMITED} ({@code Long.MAX_VALUE}) everything else; a tenant's line in the token file, or the
 * {@code tenant-quotas} setting, lowers or lifts them.
 *
 * @param memoryBytes            device memory of the buffers its sessions created (all devices together)
 * @param inFlightCommands       commands submitted and not finished, over all its sessions
 * @param streams                streams made by CreateStream, over all its sessions
 * @param compileMillisPerMinute compile time its compilations may take in any one-minute window
 * @param messageBytes           largest single gRPC message it may send (the daemon's own limit still applies)
 */
public record Quotas(long memoryBytes, long inFlightCommands, long streams, long compileMillisPerMinute,
        long messageBytes) {

    public static final long UNLIMITED = Long.MAX_VALUE;

    public static final Quotas NONE = new Quotas(UNLIMITED, UNLIMITED, UNLIMITED, UNLIMITED, UNLIMITED);

    /** Streams a tenant may hold when nothing says otherwise: each busy stream is a thread of the daemon. */
    public static final long DEFAULT_STREAMS = 64;

    /** What a tenant may hold when nothing lowers or lifts it: {@value #DEFAULT_STREAMS} streams, the rest unlimited. */
    public static final Quotas DEFAULTS = new Quotas(UNLIMITED, UNLIMITED, DEFAULT_STREAMS, UNLIMITED, UNLIMITED);

    /** The keys of {@link #parse}, as documented in docs/security.md. */
    public static final String KEYS = "memory=BYTES inflight=N streams=N compile-seconds=N message=BYTES";

    private static final Function<String, Long> BYTES = Parsers.bytes(0, Long.MAX_VALUE);

    /**
     * Applies {@code key=value} settings over these quotas: {@code memory=1GiB}, {@code inflight=10000},
     * {@code streams=16}, {@code compile-seconds=30} (per minute), {@code message=16MiB}; {@code unlimited}
     * as a value lifts one.
     *
     * @throws IllegalArgumentException naming the bad key or value
     */
    public Quotas with(String rawKey, String value) {
        String key = rawKey.toLowerCase(Locale.ROOT);
        long v = value.equalsIgnoreCase("unlimited") ? UNLIMITED : switch (key) {
            case "memory", "message" -> BYTES.apply(value);
            case "inflight", "streams", "compile-seconds" -> parseCount(key, value);
            default -> throw new IllegalArgumentException("\"" + key + "\" (expected one of: " + KEYS + ")");
        };
        return switch (key) {
            case "memory" -> new Quotas(v, inFlightCommands, streams, compileMillisPerMinute, messageBytes);
            case "inflight" -> new Quotas(memoryBytes, v, streams, compileMillisPerMinute, messageBytes);
            case "streams" -> new Quotas(memoryBytes, inFlightCommands, v, compileMillisPerMinute, messageBytes);
            case "compile-seconds" -> new Quotas(memoryBytes, inFlightCommands, streams,
                    v == UNLIMITED ? UNLIMITED : Math.multiplyExact(v, 1000L), messageBytes);
            case "message" -> new Quotas(memoryBytes, inFlightCommands, streams, compileMillisPerMinute, v);
            default -> throw new IllegalArgumentException("\"" + key + "\" (expected one of: " + KEYS + ")");
        };
    }

    /** {@code "memory=1GiB streams=4"} over {@link #NONE}-style defaults; blank = these quotas. */
    public Quotas parse(String settings) {
        Quotas q = this;
        for (String kv : settings.trim().split("\\s+")) {
            if (kv.isEmpty()) {
                continue;
            }
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("\"" + kv + "\" (expected key=value, keys: " + KEYS + ")");
            }
            q = q.with(kv.substring(0, eq), kv.substring(eq + 1));
        }
        return q;
    }

    private static long parseCount(String key, String value) {
        try {
            long n = Long.parseLong(value);
            if (n < 0 || n > 1L << 40) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + "=" + value + " (expected: an integer in 0..2^40, or unlimited)");
        }
    }
}
