package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.MemRef;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Sub-allocates buffers inside large device slabs (OCANNL's slab pools).
 *
 * <pre>
 *  slab (pool id 3, 64 MiB, from Device.allocPool)
 *  +--------+----------+------+----------------+-------------+
 *  | buf A  |  free    | buf B|     free       |   buf C     |
 *  +--------+----------+------+----------------+-------------+
 *  0        a          f      f+b                            64 MiB
 *  every offset and every block size is a multiple of `alignment`
 * </pre>
 *
 * <p>Free space is kept twice: per slab by offset (to merge a freed block with its neighbours)
 * and across slabs by size (best fit: the smallest free block that holds the request). When no
 * block fits, a new slab of {@code max(slabBytes, request)} is taken from the device if the
 * budget allows; a slab whose blocks are all free again is returned to the device, except the
 * last one, kept for reuse. Byte accounting is exact: {@code used} is the sum of live blocks,
 * {@code reserved} the sum of slabs, and {@code reserved = used + free} always.
 *
 * <p><b>Fences.</b> A block may be freed while commands still use it (an evicted replica whose last
 * readers are running): {@link #free(MemRef, Collection)} records those commands' events on the
 * range, and {@link #allocate(long, List)} hands them to whoever gets memory overlapping it, who
 * orders its first write after them. A slab is not returned to the device while a fence on it is
 * pending; an empty one goes back when its last fence is done. When the budget is full, empty slabs
 * go back before a request is refused: at once when nothing uses them, else they leave the budget now (no
 * block goes there again) and the device frees their memory once their fences are done, so memory that
 * is free but split into slabs too small for the request never refuses it.
 */
public final class SlabPool {

    private record Block(int pool, long offset, long size) {}

    private static final Comparator<Block> BY_SIZE = Comparator.comparingLong(Block::size)
            .thenComparingInt(Block::pool).thenComparingLong(Block::offset);

    private final Device device;
    private final long alignment;
    private final long slabBytes;
    private final long budget;
    private final TreeSet<Block> freeBySize = new TreeSet<>(BY_SIZE);
    private final Map<Integer, TreeMap<Long, Long>> freeByOffset = new HashMap<>();
    private final Map<Integer, Long> slabSizes = new HashMap<>();
    private final Map<Integer, Long> slabUsed = new HashMap<>();
    private record Fence(long offset, long end, Event[] events) {
        boolean pending() {
            for (Event e : events) {
                if (!e.isDone()) {
                    return true;
                }
            }
            return false;
        }
    }

    private final Map<Integer, List<Fence>> fences = new HashMap<>();
    private int nextPoolId = 1;
    private long used;
    private long reserved;
    private long liveBlocks;

    /**
     * @param slabBytes preferred slab size (a larger request gets a slab of its own size)
     * @param budget    most bytes of slabs this pool may hold on the device
     */
    public SlabPool(Device device, long alignment, long slabBytes, long budget) {
        if (alignment <= 0 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment: " + alignment + " (expected: a power of two)");
        }
        this.device = device;
        this.alignment = alignment;
        this.slabBytes = alignUp(Math.max(slabBytes, alignment));
        this.budget = budget;
    }

    /** Allocates {@code bytes} (rounded up to the alignment; 0 is treated as 1) where no fence is pending. */
    public synchronized MemRef allocate(long bytes) {
        return allocate(bytes, null);
    }

    /**
     * Allocates {@code bytes} (rounded up to the alignment; 0 is treated as 1), adding to {@code fencesOut}
     * the still-pending events of commands using memory that overlaps the block (see the class comment).
     * With {@code fencesOut} null, fenced memory is a caller's bug (IllegalStateException).
     */
    public synchronized MemRef allocate(long bytes, List<Event> fencesOut) {
        if (bytes < 0) {
            throw ArraydException.invalid("bytes: " + bytes + " (expected: >= 0)");
        }
        long size = alignUp(Math.max(1, bytes));
        Block fit = freeBySize.ceiling(new Block(Integer.MIN_VALUE, Long.MIN_VALUE, size));
        if (fit == null) {
            fit = newSlab(size);
        }
        removeFree(fit);
        if (fit.size() > size) {
            addFree(new Block(fit.pool(), fit.offset() + size, fit.size() - size));
        }
        used += size;
        liveBlocks++;
        slabUsed.merge(fit.pool(), size, Long::sum);
        collectFences(fit.pool(), fit.offset(), fit.offset() + size, fencesOut);
        return new MemRef(fit.pool(), fit.offset(), size);
    }

    private void collectFences(int pool, long offset, long end, List<Event> out) {
        if (fences.isEmpty()) {
            return;
        }
        List<Fence> list = fences.get(pool);
        if (list == null) {
            return;
        }
        list.removeIf(f -> !f.pending());
        for (Fence f : list) {
            if (f.offset() < end && offset < f.end()) {
                for (Event e : f.events()) {
                    if (!e.isDone()) {
                        if (out == null) {
                            throw new IllegalStateException("allocate without fences got memory still used by " + e);
                        }
                        out.add(e);
                    }
                }
            }
        }
        if (list.isEmpty()) {
            fences.remove(pool);
        }
    }

    /**
     * Frees a block whose last users may still run: {@code users} are their events (done ones are
     * ignored). The memory is free for accounting at once; a later allocation overlapping it gets the
     * events as fences.
     */
    public synchronized void free(MemRef ref, Collection<Event> users) {
        List<Event> pending = new ArrayList<>();
        for (Event e : users) {
            if (!e.isDone()) {
                pending.add(e);
            }
        }
        if (!pending.isEmpty()) {
            fences.computeIfAbsent(ref.poolId(), p -> new ArrayList<>())
                    .add(new Fence(ref.offset(), ref.offset() + ref.bytes(), pending.toArray(Event[]::new)));
        }
        free(ref);
    }

    /** Frees a block returned by {@link #allocate}. */
    public synchronized void free(MemRef ref) {
        TreeMap<Long, Long> slabFree = freeByOffset.get(ref.poolId());
        if (slabFree == null || ref.bytes() <= 0 || ref.bytes() % alignment != 0) {
            throw new IllegalStateException("free of " + ref + ": not a block of this pool");
        }
        long offset = ref.offset();
        long size = ref.bytes();
        var before = slabFree.floorEntry(offset);
        if (before != null && before.getKey() + before.getValue() > offset) {
            throw new IllegalStateException("double free of " + ref);
        }
        var after = slabFree.ceilingEntry(offset);
        if (after != null && offset + size > after.getKey()) {
            throw new IllegalStateException("free of " + ref + " overlaps free space at " + after.getKey());
        }
        used -= size;
        liveBlocks--;
        long slabLive = slabUsed.merge(ref.poolId(), -size, Long::sum);
        if (before != null && before.getKey() + before.getValue() == offset) {
            removeFree(new Block(ref.poolId(), before.getKey(), before.getValue()));
            offset = before.getKey();
            size += before.getValue();
        }
        if (after != null && after.getKey() == offset + size) {
            removeFree(new Block(ref.poolId(), after.getKey(), after.getValue()));
            size += after.getValue();
        }
        addFree(new Block(ref.poolId(), offset, size));
        if (slabLive == 0 && slabSizes.size() > 1) {
            List<Event> users = pendingFences(ref.poolId());
            if (users.isEmpty()) {
                releaseSlab(ref.poolId());
            } else {
                releaseWhenUnfenced(ref.poolId(), users);
            }
        }
    }

    /** Bytes in live blocks (aligned sizes). */
    public synchronized long usedBytes() {
        return used;
    }

    /** Bytes held in slabs. */
    public synchronized long reservedBytes() {
        return reserved;
    }

    public long budgetBytes() {
        return budget;
    }

    public long alignment() {
        return alignment;
    }

    public synchronized SlabPoolStats stats() {
        long free = reserved - used;
        long largest = freeBySize.isEmpty() ? 0 : freeBySize.last().size();
        double fragmentation = free == 0 ? 0.0 : 1.0 - (double) largest / free;
        return new SlabPoolStats(device.id(), used, reserved, budget, slabSizes.size(), liveBlocks, largest, fragmentation);
    }

    /**
     * Checks the pool's invariants: blocks aligned, no overlap, free + used = reserved. For tests.
     */
    public synchronized void checkInvariants() {
        long free = 0;
        for (var e : freeByOffset.entrySet()) {
            long slabSize = slabSizes.get(e.getKey());
            long end = -1;
            for (var b : e.getValue().entrySet()) {
                if (b.getKey() % alignment != 0 || b.getValue() % alignment != 0 || b.getValue() <= 0) {
                    throw new IllegalStateException("misaligned free block " + b + " in pool " + e.getKey());
                }
                if (b.getKey() <= end) {
                    throw new IllegalStateException("free blocks touch or overlap at " + b + " in pool " + e.getKey());
                }
                end = b.getKey() + b.getValue();
                if (end > slabSize) {
                    throw new IllegalStateException("free block " + b + " beyond slab end " + slabSize);
                }
                if (!freeBySize.contains(new Block(e.getKey(), b.getKey(), b.getValue()))) {
                    throw new IllegalStateException("free block " + b + " missing from size index");
                }
                free += b.getValue();
            }
        }
        if (free + used != reserved) {
            throw new IllegalStateException("free " + free + " + used " + used + " != reserved " + reserved);
        }
        if (freeBySize.size() != freeByOffset.values().stream().mapToInt(Map::size).sum()) {
            throw new IllegalStateException("size index and offset index disagree");
        }
    }

    /** Returns every slab to the device. Live blocks become invalid. */
    public synchronized void releaseAll() {
        for (Integer pool : slabSizes.keySet().toArray(Integer[]::new)) {
            device.freePool(pool);
        }
        slabSizes.clear();
        slabUsed.clear();
        fences.clear();
        freeByOffset.clear();
        freeBySize.clear();
        used = 0;
        reserved = 0;
        liveBlocks = 0;
    }

    private Block newSlab(long size) {
        if (reserved + size > budget) {
            // empty slabs (the one kept for reuse, or ones too small here) make room before the budget says no; one
            // whose memory commands still use leaves the budget now and goes back to the device once they are done
            for (Integer pool : slabSizes.keySet().toArray(Integer[]::new)) {
                if (slabUsed.get(pool) == 0 && reserved + size > budget) {
                    List<Event> users = pendingFences(pool);
                    if (users.isEmpty()) {
                        releaseSlab(pool);
                    } else {
                        retireSlab(pool, users);
                    }
                }
            }
        }
        long bytes = Math.max(slabBytes, size);
        if (reserved + bytes > budget) {
            // a smaller slab that still fits the request, if the budget allows that much
            bytes = size;
        }
        if (reserved + bytes > budget) {
            long largest = freeBySize.isEmpty() ? 0 : freeBySize.last().size();
            throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, "device " + device.id() + ": cannot allocate "
                    + size + " bytes: " + used + " of its budget " + budget + " bytes in use, largest free block "
                    + largest + " bytes");
        }
        int pool = nextPoolId++;
        device.allocPool(pool, bytes, alignment);
        reserved += bytes;
        slabSizes.put(pool, bytes);
        slabUsed.put(pool, 0L);
        freeByOffset.put(pool, new TreeMap<>());
        Block b = new Block(pool, 0, bytes);
        addFree(b);
        return b;
    }

    /** Gives an empty slab back to the device (nothing may use its memory any more). */
    private void releaseSlab(int pool) {
        forget(pool);
        device.freePool(pool);
    }

    /**
     * An empty slab whose memory commands still use ({@code users}): out of the pool and the budget at once (no
     * block is allocated in it again), given back to the device once they are done. Meanwhile the device holds
     * its bytes beside the budget.
     */
    private void retireSlab(int pool, List<Event> users) {
        forget(pool);
        Event.whenAllDone(users, () -> device.freePool(pool));
    }

    /** Drops an empty slab from the pool's books (its free space, fences and bytes). */
    private void forget(int pool) {
        fences.remove(pool);
        TreeMap<Long, Long> free = freeByOffset.remove(pool);
        for (var e : free.entrySet()) {
            freeBySize.remove(new Block(pool, e.getKey(), e.getValue()));
        }
        reserved -= slabSizes.remove(pool);
        slabUsed.remove(pool);
    }

    /**
     * An empty slab whose memory commands still use: given back once they are done (when it is still
     * empty then, and not the last slab).
     */
    private void releaseWhenUnfenced(int pool, List<Event> users) {
        Event.whenAllDone(users, () -> {
            synchronized (this) {
                Long live = slabUsed.get(pool);
                if (live != null && live == 0 && slabSizes.size() > 1 && pendingFences(pool).isEmpty()) {
                    releaseSlab(pool);
                }
            }
        });
    }

    /** The events of pending fences on {@code pool} (pruning finished fences). */
    private List<Event> pendingFences(int pool) {
        List<Event> out = new ArrayList<>();
        List<Fence> list = fences.get(pool);
        if (list == null) {
            return out;
        }
        list.removeIf(f -> !f.pending());
        for (Fence f : list) {
            for (Event e : f.events()) {
                if (!e.isDone()) {
                    out.add(e);
                }
            }
        }
        if (list.isEmpty()) {
            fences.remove(pool);
        }
        return out;
    }

    private void addFree(Block b) {
        freeBySize.add(b);
        freeByOffset.get(b.pool()).put(b.offset(), b.size());
    }

    private void removeFree(Block b) {
        freeBySize.remove(b);
        freeByOffset.get(b.pool()).remove(b.offset());
    }

    private long alignUp(long v) {
        long r = (v + alignment - 1) & -alignment;
        if (r < v) {
            throw ArraydException.invalid("bytes: " + v + " (expected: at most " + (Long.MAX_VALUE & -alignment) + ")");
        }
        return r;
    }
}
