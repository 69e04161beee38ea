package dev.arrayd.devices.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * The daemon's side of a ring transfer against a client played by a second thread that follows the protocol
 * (or breaks it): every byte arrives, in order, for any size and geometry; a client that stops fails the
 * transfer after the stall time; a client's wrong counts never make the daemon touch memory outside the ring.
 */
class SlotRingTest {

    private static final VarHandle COUNT = ValueLayout.JAVA_LONG.varHandle();
    private static final long FILLED = 0;

    private static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** The client of a download: empties each piece once the daemon filled it, then counts it consumed. */
    private static byte[] consume(MemorySegment ring, long slotBytes, int slots, int size) {
        byte[] out = new byte[size];
        long pieces = (size + slotBytes - 1) / slotBytes;
        for (long k = 0; k < pieces; k++) {
            while ((long) COUNT.getAcquire(ring, FILLED) < k + 1) {
                Thread.onSpinWait();
            }
            long at = k * slotBytes;
            MemorySegment.copy(ring, ValueLayout.JAVA_BYTE, SlotRing.HEADER_BYTES + (k % slots) * slotBytes, out, (int) at,
                    (int) Math.min(slotBytes, size - at));
            COUNT.setRelease(ring, SlotRing.CONSUMED_OFFSET, k + 1);
        }
        return out;
    }

    /** The client of an upload: fills each piece once its slot was emptied, then counts it filled. */
    private static void produce(MemorySegment ring, long slotBytes, int slots, byte[] data) {
        long pieces = (data.length + slotBytes - 1) / slotBytes;
        for (long k = 0; k < pieces; k++) {
            while ((long) COUNT.getAcquire(ring, SlotRing.CONSUMED_OFFSET) < k + 1 - slots) {
                Thread.onSpinWait();
            }
            long at = k * slotBytes;
            MemorySegment.copy(data, (int) at, ring, ValueLayout.JAVA_BYTE, SlotRing.HEADER_BYTES + (k % slots) * slotBytes,
                    (int) Math.min(slotBytes, data.length - at));
            COUNT.setRelease(ring, FILLED, k + 1);
        }
    }

    @Property(tries = 40)
    void everyByteArrivesInOrderBothWays(@ForAll @IntRange(max = 300_000) int size,
            @ForAll @IntRange(min = 64, max = 512) int slotLines, @ForAll @IntRange(min = 2, max = 6) int slots)
            throws Exception {
        long slotBytes = slotLines * 64L;
        byte[] data = random(size, size * 31L + slots);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment ring = arena.allocate(SlotRing.bytesFor(slotBytes, slots), 64);
            SlotRing r = new SlotRing(ring, slotBytes, slots, SlotRing.DEFAULT_STALL_NANOS);

            CompletableFuture<byte[]> client = CompletableFuture.supplyAsync(() -> consume(ring, slotBytes, slots, size));
            r.fill(MemorySegment.ofArray(data));
            assertArrayEquals(data, client.get(30, TimeUnit.SECONDS), "download");

            ring.fill((byte) 0);
            byte[] in = new byte[size];
            CompletableFuture<Void> producer = CompletableFuture.runAsync(() -> produce(ring, slotBytes, slots, data));
            r.drain(MemorySegment.ofArray(in));
            producer.get(30, TimeUnit.SECONDS);
            assertArrayEquals(data, in, "upload");
        }
    }

    @Test
    void aClientThatStopsFailsTheTransferAfterTheStallTime() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ring = arena.allocate(SlotRing.bytesFor(4096, 2), 64);
            SlotRing r = new SlotRing(ring, 4096, 2, 50_000_000L);
            // two pieces fit before the client must have consumed one; it never does
            ArraydException e = assertThrows(ArraydException.class, () -> r.fill(arena.allocate(5 * 4096)));
            assertEquals(ErrorCode.DEADLINE_EXCEEDED, e.code());
            assertTrue(e.getMessage().contains("consumed count stayed at 0 for 50 ms (expected: at least 1 for piece 2 of 5)"),
                    e.getMessage());
            assertEquals(2L, (long) COUNT.getAcquire(ring, FILLED), "the pieces that fitted were published");

            COUNT.setRelease(ring, FILLED, 0L); // a new transfer: nothing filled
            ArraydException up = assertThrows(ArraydException.class, () -> r.drain(arena.allocate(4096)));
            assertEquals(ErrorCode.DEADLINE_EXCEEDED, up.code());
            assertTrue(up.getMessage().contains("filled count stayed at"), up.getMessage());
        }
    }

    @Test
    void wrongCountsSpoilOnlyTheClientsOwnBytes() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment block = arena.allocate(SlotRing.bytesFor(4096, 2) + 2 * 4096, 64);
            block.fill((byte) 7);
            MemorySegment ring = block.asSlice(4096, SlotRing.bytesFor(4096, 2));
            SlotRing r = new SlotRing(ring, 4096, 2, 50_000_000L);
            COUNT.setRelease(ring, SlotRing.CONSUMED_OFFSET, Long.MAX_VALUE); // "everything consumed", always
            r.fill(MemorySegment.ofArray(random(9 * 4096 + 5, 1))); // runs through, overwriting its own slots
            COUNT.setRelease(ring, FILLED, Long.MAX_VALUE);
            r.drain(arena.allocate(9 * 4096)); // reads whatever the slots hold
            for (long i = 0; i < 4096; i++) {
                assertEquals(7, block.get(ValueLayout.JAVA_BYTE, i), "before the ring");
                assertEquals(7, block.get(ValueLayout.JAVA_BYTE, 4096 + ring.byteSize() + i), "after the ring");
            }
            COUNT.setRelease(ring, SlotRing.CONSUMED_OFFSET, -5L);
            ArraydException e = assertThrows(ArraydException.class, () -> r.fill(arena.allocate(3 * 4096)));
            assertEquals(ErrorCode.DEADLINE_EXCEEDED, e.code());
        }
    }

    @Test
    void anInterruptedWaitIsCancelled() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment ring = arena.allocate(SlotRing.bytesFor(4096, 2), 64);
            SlotRing r = new SlotRing(ring, 4096, 2, SlotRing.DEFAULT_STALL_NANOS);
            CompletableFuture<ArraydException> failed = new CompletableFuture<>();
            Thread worker = Thread.ofPlatform().start(() -> {
                try {
                    r.drain(arena.allocate(4096));
                    failed.completeExceptionally(new AssertionError("drained with no client"));
                } catch (ArraydException e) {
                    failed.complete(e);
                }
            });
            worker.interrupt();
            assertEquals(ErrorCode.CANCELLED, failed.get(30, TimeUnit.SECONDS).code());
            worker.join();
        }
    }

    @Test
    void aGeometryOutsideTheBoundsIsRefusedNamingIt() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment m = arena.allocate(1 << 20, 64);
            assertEquals("ring.slots: 1 (expected: 2 to 64)",
                    assertThrows(ArraydException.class, () -> new SlotRing(m, 4096, 1, 1)).getMessage());
            assertEquals("ring.slot_bytes: 4100 (expected: a multiple of 64 from 4096 to 67108864)",
                    assertThrows(ArraydException.class, () -> new SlotRing(m, 4100, 2, 1)).getMessage());
            assertEquals("ring.slots: 65 (expected: 2 to 64)",
                    assertThrows(ArraydException.class, () -> new SlotRing(m, 4096, 65, 1)).getMessage());
            ArraydException small = assertThrows(ArraydException.class, () -> new SlotRing(m.asSlice(0, 8192), 4096, 2, 1));
            assertEquals(ErrorCode.INVALID_ARGUMENT, small.code());
            assertTrue(small.getMessage().contains("expected: 8320, 64-byte aligned"), small.getMessage());
            assertThrows(ArraydException.class, () -> new SlotRing(m.asSlice(8, 1 << 16), 4096, 2, 1));
        }
    }
}
