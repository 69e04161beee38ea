package dev.arrayd.devices.cuda;

import java.util.Arrays;

/**
 * An immutable pool-id → slab map, replaced whole on alloc / free (rare) so that the lookup done for
 * every command and every buffer argument (frequent, from stream threads) is a lock-free binary search.
 */
record SlabTable(int[] ids, CudaSlab[] slabs) {

    static final SlabTable EMPTY = new SlabTable(new int[0], new CudaSlab[0]);

    CudaSlab find(int poolId) {
        int i = Arrays.binarySearch(ids, poolId);
        return i >= 0 ? slabs[i] : null;
    }

    SlabTable with(CudaSlab slab) {
        int i = Arrays.binarySearch(ids, slab.poolId());
        if (i >= 0) {
            throw new IllegalStateException("pool " + slab.poolId() + " already present");
        }
        int at = -i - 1;
        int[] newIds = new int[ids.length + 1];
        CudaSlab[] newSlabs = new CudaSlab[slabs.length + 1];
        System.arraycopy(ids, 0, newIds, 0, at);
        System.arraycopy(slabs, 0, newSlabs, 0, at);
        newIds[at] = slab.poolId();
        newSlabs[at] = slab;
        System.arraycopy(ids, at, newIds, at + 1, ids.length - at);
        System.arraycopy(slabs, at, newSlabs, at + 1, slabs.length - at);
        return new SlabTable(newIds, newSlabs);
    }

    SlabTable without(int poolId) {
        int at = Arrays.binarySearch(ids, poolId);
        if (at < 0) {
            return this;
        }
        int[] newIds = new int[ids.length - 1];
        CudaSlab[] newSlabs = new CudaSlab[slabs.length - 1];
        System.arraycopy(ids, 0, newIds, 0, at);
        System.arraycopy(slabs, 0, newSlabs, 0, at);
        System.arraycopy(ids, at + 1, newIds, at, ids.length - at - 1);
        System.arraycopy(slabs, at + 1, newSlabs, at, slabs.length - at - 1);
        return new SlabTable(newIds, newSlabs);
    }
}
