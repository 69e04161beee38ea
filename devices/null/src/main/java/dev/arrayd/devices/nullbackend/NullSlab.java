package dev.arrayd.devices.nullbackend;

import dev.arrayd.devices.api.support.PoolTable;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One slab of a null device: off-heap memory in an arena of its own when the device stores data, else
 * nothing behind it (both null).
 */
record NullSlab(int poolId, long bytes, Arena arena, MemorySegment segment) implements PoolTable.Slab {

    void free() {
        if (arena != null) {
            arena.close();
        }
    }
}
