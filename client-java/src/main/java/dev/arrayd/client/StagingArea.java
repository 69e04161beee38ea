package dev.arrayd.client;

import java.util.Map;
import java.util.TreeMap;

/**
 * A session's staging region for {@link Session#write} and {@link Session#read} over the daemon's Unix
 * socket: a shared-memory region from which uploads read and into which downloads write, cut into slots
 * first-fit. A slot is taken when a write or read starts and given back when its event completes; a write
 * or read that finds no slot large enough takes the session stream's chunked path instead, so nothing here
 * ever waits.
 */
final class StagingArea {

    /** Slots start at multiples of this (a cache line). */
    static final long ALIGN = 64;

    final MappedRegion region;
    private final TreeMap<Long, Long> free = new TreeMap<>(); // offset -> length, neighbours merged

    StagingArea(MappedRegion region) {
        this.region = region;
        free.put(0L, region.size());
    }

    /** The offset of a free slot of {@code bytes}, or -1 when none is large enough now. */
    synchronized long allocate(long bytes) {
        long need = (bytes + ALIGN - 1) / ALIGN * ALIGN;
        for (Map.Entry<Long, Long> e : free.entrySet()) {
            if (e.getValue() >= need) {
                long at = e.getKey();
                free.remove(at);
                if (e.getValue() > need) {
                    free.put(at + need, e.getValue() - need);
                }
                return at;
            }
        }
        return -1;
    }

    /** Gives back the slot {@link #allocate} returned for {@code bytes}. */
    synchronized void release(long at, long bytes) {
        long len = (bytes + ALIGN - 1) / ALIGN * ALIGN;
        Map.Entry<Long, Long> after = free.ceilingEntry(at);
        if (after != null && after.getKey() == at + len) {
            len += after.getValue();
            free.remove(after.getKey());
        }
        Map.Entry<Long, Long> before = free.floorEntry(at);
        if (before != null && before.getKey() + before.getValue() == at) {
            at = before.getKey();
            len += before.getValue();
        }
        free.put(at, len);
    }

    /** Bytes free in all (for tests). */
    synchronized long freeBytes() {
        return free.values().stream().mapToLong(Long::longValue).sum();
    }
}
