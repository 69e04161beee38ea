package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.support.PoolTable;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One slab: off-heap memory in an arena of its own, so freeing it releases exactly this memory; or host
 * memory someone else owns, used in place (no arena: freeing it leaves the memory alone).
 */
record Slab(int poolId, Arena arena, MemorySegment segment) implements PoolTable.Slab {

    public long bytes() {
        return segment.byteSize();
    }

    void free() {
        if (arena != null) {
            arena.close();
        }
    }

    long baseAddress() {
        return segment.address();
    }
}
