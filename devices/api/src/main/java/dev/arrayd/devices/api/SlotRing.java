package dev.arrayd.devices.api;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * A ring of slots in memory shared with a client, through which one large transfer streams while both sides
 * copy at once: a slot of a megabyte or so stays in the cache between the producer's copy into it and the
 * consumer's copy out of it, so the bytes cross main memory about as often as in one memcpy.
 *
 * <p>Layout from the ring's start (64-byte aligned): the producer's count of slots filled (a native-order
 * int64), at {@value #CONSUMED_OFFSET} the consumer's count of slots emptied, and from {@value #HEADER_BYTES}
 * the slots: piece {@code k} of the transfer goes through slot {@code k % slots}. The producer fills piece
 * {@code k} once {@code consumed >= k + 1 - slots}, then publishes {@code filled = k + 1}; the consumer empties
 * it once {@code filled >= k + 1}, then publishes {@code consumed = k + 1}. Both counts start at 0 (the
 * client sets them before it submits the transfer).
 *
 * <p>The daemon is the producer of a download and the consumer of an upload. It waits for the client's count
 * with a short spin, then yields, then parks for ever longer; a count that does not move for
 * {@code stallNanos} fails the transfer with DEADLINE_EXCEEDED. The client's count is only compared, never
 * used as an index: a wrong one spoils no bytes but the client's own.
 */
public final class SlotRing {

    /** The counts and their padding before the first slot. */
    public static final long HEADER_BYTES = 128;
    public static final long CONSUMED_OFFSET = 64;
    public static final int MIN_SLOTS = 2;
    public static final int MAX_SLOTS = 64;
    public static final long MIN_SLOT_BYTES = 4096;
    public static final long MAX_SLOT_BYTES = 64L << 20;
    /** How long a transfer waits for the client's count to move before it fails. */
    public static final long DEFAULT_STALL_NANOS = 5_000_000_000L;

    private static final VarHandle COUNT = ValueLayout.JAVA_LONG.varHandle();
    private static final long SPIN_NANOS = 20_000;
    private static final long YIELD_NANOS = 200_000;
    private static final long MAX_PARK_NANOS = 1_000_000;

    private final MemorySegment memory;
    private final long slotBytes;
    private final int slots;
    private final long stallNanos;

    /**
     * @param memory the ring: {@link #bytesFor} its slots long at least, 64-byte aligned
     * @throws ArraydException INVALID_ARGUMENT for a geometry outside the bounds above, naming it
     */
    public SlotRing(MemorySegment memory, long slotBytes, int slots, long stallNanos) {
        checkGeometry(slotBytes, slots, "ring");
        if (memory.byteSize() < bytesFor(slotBytes, slots) || memory.address() % 64 != 0) {
            throw ArraydException.invalid("ring: " + memory.byteSize() + " bytes at an address " + memory.address() % 64
                    + " past a multiple of 64 (expected: " + bytesFor(slotBytes, slots) + ", 64-byte aligned)");
        }
        if (stallNanos <= 0) {
            throw new IllegalArgumentException("stallNanos: " + stallNanos + " (expected: > 0)");
        }
        this.memory = memory;
        this.slotBytes = slotBytes;
        this.slots = slots;
        this.stallNanos = stallNanos;
    }

    /**
     * Refuses a geometry outside the bounds above (as unsigned wire values), naming {@code field}'s
     * {@code .slot_bytes} or {@code .slots}: INVALID_ARGUMENT. Within them, {@link #bytesFor} cannot overflow.
     */
    public static void checkGeometry(long slotBytes, int slots, String field) {
        if (slotBytes < MIN_SLOT_BYTES || slotBytes > MAX_SLOT_BYTES || slotBytes % 64 != 0) {
            throw ArraydException.invalid(field + ".slot_bytes: " + Long.toUnsignedString(slotBytes) + " (expected: a "
                    + "multiple of 64 from " + MIN_SLOT_BYTES + " to " + MAX_SLOT_BYTES + ")");
        }
        if (slots < MIN_SLOTS || slots > MAX_SLOTS) {
            throw ArraydException.invalid(field + ".slots: " + Integer.toUnsignedString(slots) + " (expected: "
                    + MIN_SLOTS + " to " + MAX_SLOTS + ")");
        }
    }

    /** The bytes a ring of {@code slots} slots of {@code slotBytes} takes, its counts included. */
    public static long bytesFor(long slotBytes, int slots) {
        return HEADER_BYTES + slotBytes * slots;
    }

    public long slotBytes() {
        return slotBytes;
    }

    public int slots() {
        return slots;
    }

    /** Producer (a download): streams {@code src} through the slots. */
    public void fill(MemorySegment src) {
        long size = src.byteSize();
        long pieces = pieces(size);
        for (long k = 0; k < pieces; k++) {
            await(CONSUMED_OFFSET, k + 1 - slots, k, pieces, "consumed");
            long at = k * slotBytes;
            MemorySegment.copy(src, at, memory, slot(k), Math.min(slotBytes, size - at));
            COUNT.setRelease(memory, 0L, k + 1);
        }
    }

    /** Consumer (an upload): fills {@code dst} from the slots. */
    public void drain(MemorySegment dst) {
        long size = dst.byteSize();
        long pieces = pieces(size);
        for (long k = 0; k < pieces; k++) {
            await(0L, k + 1, k, pieces, "filled");
            long at = k * slotBytes;
            MemorySegment.copy(memory, slot(k), dst, at, Math.min(slotBytes, size - at));
            COUNT.setRelease(memory, CONSUMED_OFFSET, k + 1);
        }
    }

    private long pieces(long size) {
        return (size + slotBytes - 1) / slotBytes;
    }

    private long slot(long k) {
        return HEADER_BYTES + (k % slots) * slotBytes;
    }

    /** Returns once the client's count at {@code offset} is at least {@code atLeast}. */
    private void await(long offset, long atLeast, long piece, long pieces, String count) {
        if ((long) COUNT.getAcquire(memory, offset) >= atLeast) {
            return;
        }
        long start = System.nanoTime();
        long moved = start;
        long seen = Long.MIN_VALUE;
        long park = 10_000;
        while (true) {
            long v = (long) COUNT.getAcquire(memory, offset);
            if (v >= atLeast) {
                return;
            }
            long now = System.nanoTime();
            if (v != seen) {
                seen = v;
                moved = now;
            } else if (now - moved > stallNanos) {
                throw new ArraydException(ErrorCode.DEADLINE_EXCEEDED, "ring: the client's " + count + " count stayed at "
                        + v + " for " + stallNanos / 1_000_000 + " ms (expected: at least " + atLeast + " for piece "
                        + piece + " of " + pieces + ")");
            }
            if (now - start < SPIN_NANOS) {
                Thread.onSpinWait();
            } else if (now - start < YIELD_NANOS) {
                Thread.yield();
            } else {
                if (Thread.currentThread().isInterrupted()) {
                    throw new ArraydException(ErrorCode.CANCELLED, "ring: interrupted while waiting for the client's "
                            + count + " count (piece " + piece + " of " + pieces + ")");
                }
                LockSupport.parkNanos(park);
                park = Math.min(park * 2, MAX_PARK_NANOS);
            }
        }
    }

    @Override
    public String toString() {
        return "SlotRing(" + slots + " x " + slotBytes + " bytes)";
    }
}
