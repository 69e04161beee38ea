package dev.arrayd.server.regions;

import java.util.function.LongSupplier;

/**
 * A shared-memory region of one session: its handle there, its memory, and the single-use claim that hands
 * its descriptor to the session's client. Freed by {@link RegionBroker#retire} once nothing of its session
 * is in flight.
 *
 * @param inFlight the session's commands not yet finished (the region is freed when this is 0)
 * @param onFreed  run once the memory is gone (gives the tenant's quota back)
 * @param buffers  buffers living in it (created with host_region) not yet released: it is freed only at 0
 * @param unlock   undoes the devices' page-locking of its memory; run once, before the memory goes
 */
public record Region(long handle, SharedMemory memory, String claim, LongSupplier inFlight, Runnable onFreed,
        java.util.concurrent.atomic.AtomicInteger buffers, Runnable unlock) {

    public long size() {
        return memory.size();
    }

    @Override
    public String toString() {
        return "region 0x" + Long.toHexString(handle) + " (" + size() + " bytes)";
    }
}
