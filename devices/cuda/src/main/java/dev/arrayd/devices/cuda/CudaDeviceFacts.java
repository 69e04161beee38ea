package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.Dialect;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * What the driver says about one device (its attributes), and the {@link DeviceInfo} made of it.
 * Pure: queried once at open by {@link CudaDiscovery}; tested with made-up values.
 */
record CudaDeviceFacts(
        String name,
        int ccMajor,
        int ccMinor,
        long totalMemoryBytes,
        int multiprocessors,
        int maxThreadsPerBlock,
        int[] maxBlockDims,
        long[] maxGridDims,
        long sharedMemoryPerBlock,
        int asyncEngines,
        boolean unifiedAddressing,
        boolean integrated) {

    /**
     * Every slab starts at a cuMemAlloc base (aligned to at least 256 bytes by the driver), and buffers
     * inside at multiples of this: 256 keeps every dtype's vector loads aligned and matches the driver.
     */
    static final long BASE_ALIGNMENT = 256;

    String arch() {
        return CompilePlan.arch(ccMajor, ccMinor);
    }

    LaunchGeometry.Limits limits() {
        return new LaunchGeometry.Limits(maxThreadsPerBlock, maxBlockDims.clone(), maxGridDims.clone());
    }

    /**
     * Streams: one per copy engine plus one for compute, between 2 and 4: more native streams than
     * engines only add contention.
     */
    int suggestedStreams() {
        return Math.max(2, Math.min(4, asyncEngines + 1));
    }

    DeviceInfo info(DeviceId id, boolean nvrtc) {
        // CUDA C and IR both go through NVRTC; PTX loads without it
        Set<Dialect> dialects = nvrtc ? Set.of(Dialect.CUDA_C, Dialect.PTX, Dialect.IR) : Set.of(Dialect.PTX);
        return new DeviceInfo(id, name + " (sm_" + ccMajor + ccMinor + ")", totalMemoryBytes, multiprocessors,
                maxThreadsPerBlock, List.of((long) maxBlockDims[0], (long) maxBlockDims[1], (long) maxBlockDims[2]),
                sharedMemoryPerBlock, BASE_ALIGNMENT, EnumSet.allOf(DType.class), suggestedStreams(), integrated,
                dialects, 3);
    }

    String describe() {
        return name + ", compute capability " + ccMajor + "." + ccMinor + ", " + multiprocessors + " SMs, "
                + (totalMemoryBytes >> 20) + " MiB, " + asyncEngines + " async engines, unified addressing "
                + (unifiedAddressing ? "yes" : "no");
    }
}
