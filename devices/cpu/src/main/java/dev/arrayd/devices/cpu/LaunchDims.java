package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DeviceInfo;

import java.util.Arrays;

/** Checks a launch's grid and normalizes it to three global and three local extents. */
final class LaunchDims {

    private LaunchDims() {}

    /**
     * Fills {@code out} with global[3] then local[3] (missing dimensions are 1; absent local dims
     * are 1 everywhere) and returns the number of work-items.
     */
    static long check(long[] global, long[] local, DeviceInfo info, long[] out) {
        if (global == null || global.length < 1 || global.length > info.maxGridDims()) {
            throw ArraydException.invalid("globalDims: " + (global == null ? "null" : Arrays.toString(global))
                    + " (expected: 1 to " + info.maxGridDims() + " dims)");
        }
        if (local != null && local.length != global.length) {
            throw ArraydException.invalid("localDims: " + Arrays.toString(local) + " (expected: " + global.length
                    + " dims, like globalDims " + Arrays.toString(global) + ")");
        }
        long items = 1;
        long groupSize = 1;
        for (int d = 0; d < 3; d++) {
            long g = d < global.length ? global[d] : 1;
            long l = local != null && d < local.length ? local[d] : 1;
            if (g <= 0) {
                throw ArraydException.invalid("globalDims[" + d + "]: " + g + " (expected: > 0)");
            }
            if (l <= 0) {
                throw ArraydException.invalid("localDims[" + d + "]: " + l + " (expected: > 0)");
            }
            if (l > info.maxWorkItemSizes().get(d)) {
                throw ArraydException.invalid("localDims[" + d + "]: " + l + " (expected: <= " + info.maxWorkItemSizes().get(d) + ")");
            }
            if (g % l != 0) {
                throw ArraydException.invalid("localDims[" + d + "]: " + l + " (expected: a divisor of globalDims[" + d + "] = " + g + ")");
            }
            groupSize *= l;
            try {
                items = Math.multiplyExact(items, g);
            } catch (ArithmeticException e) {
                throw ArraydException.invalid("globalDims: " + Arrays.toString(global) + " (expected: fewer than 2^63 work-items)");
            }
            out[d] = g;
            out[3 + d] = l;
        }
        if (groupSize > info.maxWorkGroupSize()) {
            throw ArraydException.invalid("localDims: " + Arrays.toString(local) + " (expected: at most "
                    + info.maxWorkGroupSize() + " work-items per group)");
        }
        return items;
    }
}
