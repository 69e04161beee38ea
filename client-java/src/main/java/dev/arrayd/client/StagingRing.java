package dev.arrayd.client;

import dev.arrayd.proto.v1.RegionRing;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.Future;
import java.util.concurrent.locks.LockSupport;

/**
 * This process's side of a ring transfer through a slot of the session's staging region (docs/api.md,
 * "Transfers through a ring"): a ring of {@link #SLOTS} slots, through which one large write or read streams
 * while the daemon copies the other slots, so that a slot stays in the cache between the two copies.
 *
 * <p>Layout from the ring's start (64-byte aligned): the producer's count of slots filled (a native-order
 * int64), at {@value #CONSUMED_OFFSET} the consumer's count of slots emptied, and from {@value #HEADER_BYTES}
 * the slots; piece {@code k} goes through slot {@code k % SLOTS}. This process is the producer of an upload and
 * the consumer of a download; the daemon's transfer fails when this process's count stops moving for 5 s.
 *
 * @param memory    the ring's bytes, at {@code offset} of its region
 * @param region    the region's handle in the session
 * @param offset    where the ring starts in the region
 * @param slotBytes bytes of each slot
 */
record StagingRing(MemorySegment memory, long region, long offset, long slotBytes) {

    static final int SLOTS = 8;
    static final long HEADER_BYTES = 128;
    static final long CONSUMED_OFFSET = 64;
    /** The slot sizes tried, largest first: the largest whose ring fits a free part of the staging region. */
    static final long[] SLOT_BYTES = {1 << 20, 256 << 10, 64 << 10};

    private static final VarHandle COUNT = ValueLayout.JAVA_LONG.varHandle();
    private static final long SPIN_NANOS = 20_000;
    private static final long YIELD_NANOS = 200_000;
    private static final long MAX_PARK_NANOS = 1_000_000;

    /** The bytes a ring of {@code slotBytes} slots takes, its counts included. */
    static long bytesFor(long slotBytes) {
        return HEADER_BYTES + SLOTS * slotBytes;
    }

    /** A ring at {@code offset} of {@code region}, its counts zeroed (before its command is submitted). */
    static StagingRing at(MappedRegion region, long offset, long slotBytes) {
        StagingRing r = new StagingRing(region.segment().asSlice(offset, bytesFor(slotBytes)), region.id(), offset,
                slotBytes);
        COUNT.setRelease(r.memory, 0L, 0L);
        COUNT.setRelease(r.memory, CONSUMED_OFFSET, 0L);
        return r;
    }

    /** The bytes the ring takes in its region, its counts included. */
    long byteSize() {
        return bytesFor(slotBytes);
    }

    /** The ring as a command names it, for a transfer of {@code sizeBytes}. */
    RegionRing message(long sizeBytes) {
        return RegionRing.newBuilder().setRegion(region).setOffsetBytes(offset).setSlotBytes(slotBytes).setSlots(SLOTS)
                .setSizeBytes(sizeBytes).build();
    }

    /**
     * An upload's side: copies {@code src} into the slots as the daemon empties them. Returns true once every
     * piece is in; false when {@code command} ended first (it failed: it succeeds only after the last piece)
     * or this thread was interrupted (its interrupt status stays set; the daemon fails the transfer once this
     * count stops moving).
     */
    boolean fill(MemorySegment src, Future<?> command) {
        long size = src.byteSize();
        for (long k = 0, pieces = pieces(size); k < pieces; k++) {
            if (!await(CONSUMED_OFFSET, k + 1 - SLOTS, command)) {
                return false;
            }
            long at = k * slotBytes;
            MemorySegment.copy(src, at, memory, slot(k), Math.min(slotBytes, size - at));
            COUNT.setRelease(memory, 0L, k + 1);
        }
        return true;
    }

    /**
     * A download's side: copies the slots into {@code dst} as the daemon fills them. Returns true once every
     * piece is out; false when {@code command} ended first or this thread was interrupted, as {@link #fill}.
     */
    boolean drain(MemorySegment dst, Future<?> command) {
        long size = dst.byteSize();
        for (long k = 0, pieces = pieces(size); k < pieces; k++) {
            if (!await(0L, k + 1, command)) {
                return false;
            }
            long at = k * slotBytes;
            MemorySegment.copy(memory, slot(k), dst, at, Math.min(slotBytes, size - at));
            COUNT.setRelease(memory, CONSUMED_OFFSET, k + 1);
        }
        return true;
    }

    private long pieces(long size) {
        return (size + slotBytes - 1) / slotBytes;
    }

    private long slot(long k) {
        return HEADER_BYTES + (k % SLOTS) * slotBytes;
    }

    /**
     * Waits for the daemon's count at {@code at} to reach {@code atLeast}: a short spin, then yields, then parks
     * of up to a millisecond (the command may wait behind others first). False when {@code command} ended or
     * the thread was interrupted before.
     */
    private boolean await(long at, long atLeast, Future<?> command) {
        if ((long) COUNT.getAcquire(memory, at) >= atLeast) {
            return true;
        }
        long start = System.nanoTime();
        long park = 10_000;
        while ((long) COUNT.getAcquire(memory, at) < atLeast) {
            long waited = System.nanoTime() - start;
            if (waited < SPIN_NANOS) {
                Thread.onSpinWait();
                continue;
            }
            if (command.isDone() || Thread.currentThread().isInterrupted()) {
                return (long) COUNT.getAcquire(memory, at) >= atLeast;
            }
            if (waited < YIELD_NANOS) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(park);
                park = Math.min(park * 2, MAX_PARK_NANOS);
            }
        }
        return true;
    }
}
