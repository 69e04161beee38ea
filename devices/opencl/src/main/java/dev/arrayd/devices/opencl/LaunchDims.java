package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DeviceInfo;

import java.util.Arrays;

/** Checks a launch's grid against the device before OpenCL sees it (OpenCL's own errors name no value). */
final class LaunchDims {

    private LaunchDims() {}

    static void check(long[] global, long[] local, DeviceInfo info) {
        if (global == null || global.length < 1 || global.length > info.maxGridDims()) {
            throw ArraydException.invalid("globalDims: " + (global == null ? "null" : Arrays.toString(global))
                    + " (expected: 1 to " + info.maxGridDims() + " dims)");
        }
        if (local != null && local.length != global.length) {
            throw ArraydException.invalid("localDims: " + Arrays.toString(local) + " (expected: " + global.length
                    + " dims, like globalDims " + Arrays.toString(global) + ")");
        }
        long groupSize = 1;
        for (int d = 0; d < global.length; d++) {
            long g = global[d];
            if (g <= 0) {
                throw ArraydException.invalid("globalDims[" + d + "]: " + g + " (expected: > 0)");
            }
            if (local == null) {
                continue;
            }
            long l = local[d];
            if (l <= 0) {
                throw ArraydException.invalid("localDims[" + d + "]: " + l + " (expected: > 0)");
            }
            if (l > info.maxWorkItemSizes().get(d)) {
                throw ArraydException.invalid("localDims[" + d + "]: " + l + " (expected: <= " + info.maxWorkItemSizes().get(d)
                        + " on " + info.id() + ")");
            }
            if (g % l != 0) {
                throw ArraydException.invalid("localDims[" + d + "]: " + l + " (expected: a divisor of globalDims[" + d + "] = " + g + ")");
            }
            groupSize = Math.multiplyHigh(groupSize, l) != 0 ? Long.MAX_VALUE : groupSize * l;
        }
        if (groupSize > info.maxWorkGroupSize()) {
            throw ArraydException.invalid("localDims: " + Arrays.toString(local) + " (expected: at most "
                    + info.maxWorkGroupSize() + " work-items per group on " + info.id() + ")");
        }
    }
}
