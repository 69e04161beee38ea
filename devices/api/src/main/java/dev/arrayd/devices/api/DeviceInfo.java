package dev.arrayd.devices.api;

import java.util.List;
import java.util.Set;

/**
 * Limits and capabilities of a device (Rune's {@code Device_info}).
 *
 * @param memoryBytes       memory available for buffers
 * @param computeUnits      cores, compute units or SMs
 * @param maxWorkGroupSize  largest product of local dims
 * @param maxWorkItemSizes  largest local dim per dimension
 * @param localMemoryBytes  work-group local memory
 * @param baseAlignment     every buffer starts at a multiple of this many bytes
 * @param suggestedStreams  streams this device runs well with
 * @param unifiedMemory     device memory is host memory
 * @param maxGridDims       dimensions a launch grid may have
 */
public record DeviceInfo(
        DeviceId id,
        String name,
        long memoryBytes,
        int computeUnits,
        long maxWorkGroupSize,
        List<Long> maxWorkItemSizes,
        long localMemoryBytes,
        long baseAlignment,
        Set<DType> dtypes,
        int suggestedStreams,
        boolean unifiedMemory,
        Set<Dialect> dialects,
        int maxGridDims) {

    public DeviceInfo {
        maxWorkItemSizes = List.copyOf(maxWorkItemSizes);
        dtypes = Set.copyOf(dtypes);
        dialects = Set.copyOf(dialects);
        if (baseAlignment <= 0 || Long.bitCount(baseAlignment) != 1) {
            throw new IllegalArgumentException("baseAlignment: " + baseAlignment + " (expected: a power of two)");
        }
    }
}
