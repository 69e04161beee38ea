package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DeviceInfo;
import java.util.List;

/**
 * The checks of a launch's grid that every backend and the scheduler make the same way: global dims
 * (1 to the device's dimensions, each at least 1, at most {@code maxItems} work-items in all) and local
 * dims (none, or one per global dim, each dividing its global dim and within the device's limit per
 * dimension, at most {@code maxWorkGroupSize} work-items per group).
 *
 * <p>Refusals are INVALID_ARGUMENT naming the field with the caller's names ({@link Names}): the wire's
 * {@code launch.global_dims} in the scheduler, the SPI's {@code globalDims} in a backend. Extents are
 * printed unsigned (on the wire they are uint64).
 */
public final class LaunchGrid {

    /** What the caller calls the two fields. */
    public record Names(String global, String local) {

        /** The SPI's names ({@code DeviceCommand.Launch}). */
        public static final Names SPI = new Names("globalDims", "localDims");
    }

    /**
     * A device's grid limits.
     *
     * @param maxDims       most dimensions
     * @param maxLocal      largest local extent per dimension
     * @param maxGroupItems largest product of the local extents
     * @param device        named in refusals ("on cpu:0"); empty for none
     */
    public record Limits(int maxDims, long[] maxLocal, long maxGroupItems, String device) {

        /** The limits a {@link DeviceInfo} states (at most three dimensions, as every backend has). */
        public static Limits of(DeviceInfo info) {
            List<Long> sizes = info.maxWorkItemSizes();
            long[] maxLocal = new long[3];
            for (int d = 0; d < 3; d++) {
                maxLocal[d] = d < sizes.size() ? sizes.get(d) : Long.MAX_VALUE;
            }
            return new Limits(Math.min(3, info.maxGridDims()), maxLocal, info.maxWorkGroupSize(), info.id().toString());
        }

        private String on() {
            return device.isEmpty() ? "" : " on " + device;
        }
    }

    private LaunchGrid() {}

    /**
     * Checks the grid; returns its work-items.
     *
     * @param local    null or empty for none
     * @param maxItems most work-items in all (Long.MAX_VALUE for no bound beyond the arithmetic)
     * @throws ArraydException INVALID_ARGUMENT naming the first bad field and value
     */
    public static long check(long[] global, long[] local, Limits limits, long maxItems, Names names) {
        String problem = problem(global, local, limits, maxItems, names);
        if (problem != null) {
            throw ArraydException.invalid(problem);
        }
        long items = 1;
        for (long g : global) {
            items *= g; // checked above: no overflow
        }
        return items;
    }

    /**
     * A checked grid as three global then three local extents in {@code out} (missing dimensions are 1;
     * without local dims every local extent is 1).
     */
    public static void normalize(long[] global, long[] local, long[] out) {
        boolean hasLocal = local != null && local.length != 0;
        for (int d = 0; d < 3; d++) {
            out[d] = d < global.length ? global[d] : 1;
            out[3 + d] = hasLocal && d < local.length ? local[d] : 1;
        }
    }

    /** Whether {@link #check} would accept the grid (placement asks this of every candidate device). */
    public static boolean fits(long[] global, long[] local, Limits limits, long maxItems) {
        return problem(global, local, limits, maxItems, Names.SPI) == null;
    }

    /** What {@link #check} refuses, or null. */
    private static String problem(long[] global, long[] local, Limits limits, long maxItems, Names names) {
        if (global == null || global.length < 1 || global.length > limits.maxDims()) {
            return names.global() + ": " + show(global) + " (expected: 1 to " + limits.maxDims() + " dims)";
        }
        boolean hasLocal = local != null && local.length != 0;
        if (hasLocal && local.length != global.length) {
            return names.local() + ": " + show(local) + " (expected: " + global.length + " dims, like " + names.global()
                    + " " + show(global) + ")";
        }
        long items = 1;
        long groupItems = 1;
        for (int d = 0; d < global.length; d++) {
            if (global[d] <= 0) {
                return names.global() + "[" + d + "]: " + Long.toUnsignedString(global[d]) + " (expected: > 0)";
            }
            items = Saturating.multiply(items, global[d]);
            if (!hasLocal) {
                continue;
            }
            long l = local[d];
            if (l <= 0) {
                return names.local() + "[" + d + "]: " + Long.toUnsignedString(l) + " (expected: > 0)";
            }
            if (l > limits.maxLocal()[d]) {
                return names.local() + "[" + d + "]: " + l + " (expected: <= " + limits.maxLocal()[d] + limits.on() + ")";
            }
            if (global[d] % l != 0) {
                return names.local() + "[" + d + "]: " + l + " (expected: a divisor of " + names.global() + "[" + d
                        + "] = " + global[d] + ")";
            }
            groupItems = Saturating.multiply(groupItems, l);
        }
        if (items > maxItems || items == Long.MAX_VALUE) {
            return names.global() + ": " + show(global) + " (expected: at most "
                    + (maxItems == Long.MAX_VALUE ? "2^63 - 2" : Long.toString(maxItems)) + " work-items in all)";
        }
        if (groupItems > limits.maxGroupItems()) {
            return names.local() + ": " + show(local) + " (expected: at most " + limits.maxGroupItems()
                    + " work-items per group" + limits.on() + ")";
        }
        return null;
    }

    private static String show(long[] dims) {
        if (dims == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < dims.length; i++) {
            sb.append(i == 0 ? "" : ", ").append(Long.toUnsignedString(dims[i]));
        }
        return sb.append(']').toString();
    }
}
