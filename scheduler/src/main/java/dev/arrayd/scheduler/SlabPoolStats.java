package dev.arrayd.scheduler;

import dev.arrayd.devices.api.DeviceId;

/**
 * A snapshot of one device's slab pool.
 *
 * @param fragmentation 1 - largestFree / free: 0 when all free space is one block
 */
public record SlabPoolStats(DeviceId device, long usedBytes, long reservedBytes, long budgetBytes, int slabs,
        long liveBlocks, long largestFreeBlock, double fragmentation) {}
