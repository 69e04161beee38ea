package dev.arrayd.client;

import java.util.List;
import java.util.Objects;

/**
 * Limits and capabilities of one device the daemon owns. A snapshot: {@code memoryUsedBytes} is the
 * value at the time of the call.
 *
 * @param id                 stable id {@code "<backend>:<ordinal>"}, e.g. {@code "cpu:0"}
 * @param backend            backend name
 * @param name               human-readable name (CPU model, GPU name)
 * @param memoryBytes        memory the device has for buffers
 * @param memoryBudgetBytes  the part of it arrayd will allocate
 * @param memoryUsedBytes    bytes currently allocated to buffers
 * @param computeUnits       cores / compute units / SMs
 * @param maxWorkGroupSize   largest work-group
 * @param maxWorkItemSizes   largest work-group extent per dimension
 * @param localMemoryBytes   local (shared) memory per work-group
 * @param baseAlignmentBytes buffers start at multiples of this
 * @param dtypes             element types the device supports
 * @param suggestedStreams   how many streams the device runs well with
 * @param unifiedMemory      whether device memory is host memory
 * @param dialects           kernel dialects the device compiles
 * @param maxGridDims        maximum number of launch grid dimensions
 * @param ringTransfers      whether the device's buffers take ring transfers: {@link Session#write} and
 *                           {@link Session#read} over a Unix socket stream larger arrays through the session's
 *                           staging region then (see {@code docs/api.md}, "Transfers through a ring")
 */
public record DeviceInfo(
        String id,
        String backend,
        String name,
        long memoryBytes,
        long memoryBudgetBytes,
        long memoryUsedBytes,
        int computeUnits,
        long maxWorkGroupSize,
        List<Long> maxWorkItemSizes,
        long localMemoryBytes,
        long baseAlignmentBytes,
        List<DType> dtypes,
        int suggestedStreams,
        boolean unifiedMemory,
        List<Dialect> dialects,
        int maxGridDims,
        boolean ringTransfers) {
    public DeviceInfo {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(name, "name");
        maxWorkItemSizes = List.copyOf(maxWorkItemSizes);
        dtypes = List.copyOf(dtypes);
        dialects = List.copyOf(dialects);
    }
}
