package dev.arrayd.scheduler;

import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Unguessable handles: 63 random bits from a cryptographic source, nonzero. They are scoped to a
 * session by the tables that hold them, so another session's handle is simply not found.
 * Handles are made when objects are created, never per command, so the secure source is cheap enough.
 */
final class Handles {

    private static final SecureRandom RANDOM = new SecureRandom();

    private Handles() {}

    static long next() {
        long h;
        do {
            h = RANDOM.nextLong() & Long.MAX_VALUE;
        } while (h == 0);
        return h;
    }

    /** A session token: 128 random bits in hex. */
    static String sessionToken() {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    static String format(long handle) {
        return "0x" + Long.toHexString(handle);
    }
}
