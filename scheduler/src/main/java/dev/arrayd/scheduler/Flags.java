package dev.arrayd.scheduler;

/**
 * Per-buffer flag arrays of a prepared command (reads, writes, whole-buffer writes), shared: every
 * launch has them, most touch one to four buffers, and the arrays are never written after a command
 * is prepared, so one canonical array per pattern serves all commands instead of three new ones each.
 * Callers must treat the arrays as read-only.
 */
final class Flags {

    /** Patterns of up to this many buffers are shared. */
    private static final int SHARED = 4;
    private static final boolean[][][] BY_LENGTH = new boolean[SHARED + 1][][];

    static {
        for (int n = 0; n <= SHARED; n++) {
            BY_LENGTH[n] = new boolean[1 << n][];
            for (int mask = 0; mask < 1 << n; mask++) {
                boolean[] f = new boolean[n];
                for (int i = 0; i < n; i++) {
                    f[i] = (mask & (1 << i)) != 0;
                }
                BY_LENGTH[n][mask] = f;
            }
        }
    }

    private Flags() {}

    /** {@code n} flags, flag {@code i} set when bit {@code i} of {@code mask} is ({@code n <= 64}). */
    static boolean[] of(long mask, int n) {
        if (n <= SHARED) {
            return BY_LENGTH[n][(int) mask & ((1 << n) - 1)];
        }
        boolean[] f = new boolean[n];
        for (int i = 0; i < n; i++) {
            f[i] = (mask & (1L << i)) != 0;
        }
        return f;
    }

    /** {@code n} flags, none set. */
    static boolean[] none(int n) {
        return n <= SHARED ? BY_LENGTH[n][0] : new boolean[n];
    }
}
