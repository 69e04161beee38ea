package dev.arrayd.devices.api.support;

/** Products of sizes that must not wrap: past {@link Long#MAX_VALUE} they stay there, so a bound check refuses them. */
public final class Saturating {

    private Saturating() {}

    /** {@code a * b}, or {@link Long#MAX_VALUE} when the product does not fit (or is negative). */
    public static long multiply(long a, long b) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        return (hi != 0 || lo < 0) ? Long.MAX_VALUE : lo;
    }
}
