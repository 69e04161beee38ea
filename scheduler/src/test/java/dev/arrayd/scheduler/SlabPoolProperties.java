package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.nullbackend.NullDevice;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** Slab pool invariants after every step of random allocate/free sequences. */
class SlabPoolProperties {

    @Property(tries = 200)
    void bytesAreConservedAndBlocksNeverOverlap(
            @ForAll @Size(min = 1, max = 200) List<@IntRange(min = -40, max = 5000) Integer> ops) {
        NullDevice device = TestDevices.memoryOnly(1 << 20);
        SlabPool pool = new SlabPool(device, 64, 16 << 10, 1 << 20);
        List<MemRef> live = new ArrayList<>();
        long expectedUsed = 0;
        for (int op : ops) {
            if (op < 0 && !live.isEmpty()) {
                MemRef r = live.remove(Math.floorMod(op, live.size()));
                pool.free(r);
                expectedUsed -= r.bytes();
            } else if (op >= 0) {
                MemRef r = pool.allocate(op);
                assertEquals(0, r.offset() % 64, "aligned offset");
                assertTrue(r.bytes() >= Math.max(1, op) && r.bytes() % 64 == 0, "aligned size");
                live.add(r);
                expectedUsed += r.bytes();
            }
            pool.checkInvariants();
            assertEquals(expectedUsed, pool.usedBytes());
            assertEquals(pool.reservedBytes(), device.usedBytes(), "reserved bytes match the device's slabs");
            assertNoOverlap(live);
        }
        for (MemRef r : live) {
            pool.free(r);
        }
        pool.checkInvariants();
        assertEquals(0, pool.usedBytes());
        assertTrue(pool.stats().slabs() <= 1, "empty slabs returned to the device except one");
        pool.releaseAll();
        assertEquals(0, device.usedBytes());
    }

    private static void assertNoOverlap(List<MemRef> live) {
        List<MemRef> sorted = new ArrayList<>(live);
        sorted.sort(Comparator.comparingInt(MemRef::poolId).thenComparingLong(MemRef::offset));
        for (int i = 1; i < sorted.size(); i++) {
            MemRef a = sorted.get(i - 1);
            MemRef b = sorted.get(i);
            if (a.poolId() == b.poolId()) {
                assertTrue(a.offset() + a.bytes() <= b.offset(), a + " overlaps " + b);
            }
        }
    }

    @Test
    void freedSpaceIsReusedAndMerged() {
        NullDevice device = TestDevices.memoryOnly(1 << 20);
        SlabPool pool = new SlabPool(device, 64, 4096, 1 << 20);
        MemRef a = pool.allocate(1024);
        MemRef b = pool.allocate(1024);
        MemRef c = pool.allocate(1024);
        pool.free(a);
        pool.free(b);
        MemRef d = pool.allocate(2048);
        assertEquals(a.poolId(), d.poolId());
        assertEquals(a.offset(), d.offset(), "a and b merged into one block and reused");
        assertEquals(1, pool.stats().slabs());
        pool.free(c);
        pool.free(d);
        assertEquals(0, pool.usedBytes());
        assertEquals(0.0, pool.stats().fragmentation());
        pool.releaseAll();
    }

    @Test
    void overBudgetIsResourceExhaustedNamingDeviceAndBytes() {
        NullDevice device = TestDevices.memoryOnly(1 << 20);
        SlabPool pool = new SlabPool(device, 64, 4096, 8192);
        pool.allocate(8192);
        ArraydException e = assertThrows(ArraydException.class, () -> pool.allocate(64));
        assertEquals(ErrorCode.RESOURCE_EXHAUSTED, e.code());
        assertTrue(e.getMessage().contains("null:0") && e.getMessage().contains("64 bytes"), e.getMessage());
        pool.releaseAll();
    }

    @Test
    void anEmptySlabStillInUseMakesRoomForALargerRequest() {
        NullDevice device = TestDevices.memoryOnly(1 << 20);
        SlabPool pool = new SlabPool(device, 64, 4096, 8192);
        MemRef a = pool.allocate(4096);
        MemRef b = pool.allocate(4096);
        Event reading = new Event(1);
        pool.free(a, List.of(reading)); // a command still reads a's memory: its slab stays
        pool.free(b);                    // b's goes back at once (not the last slab)
        assertEquals(4096, pool.reservedBytes());
        MemRef c = pool.allocate(8192);   // more than the slab kept: it leaves the budget, and c gets a new slab
        assertTrue(c.poolId() != a.poolId());
        assertEquals(8192, pool.reservedBytes());
        pool.checkInvariants();
        assertEquals(4096 + 8192, device.usedBytes(), "a's memory stays on the device while it is read");
        reading.succeed(0, null);
        assertEquals(8192, device.usedBytes(), "and goes back once the reader is done");
        pool.free(c);
        pool.releaseAll();
        assertEquals(0, device.usedBytes());
    }

    @Test
    void doubleFreeIsCaught() {
        NullDevice device = TestDevices.memoryOnly(1 << 20);
        SlabPool pool = new SlabPool(device, 64, 4096, 1 << 20);
        MemRef a = pool.allocate(100);
        pool.allocate(100);
        pool.free(a);
        assertThrows(IllegalStateException.class, () -> pool.free(a));
        pool.releaseAll();
    }
}
