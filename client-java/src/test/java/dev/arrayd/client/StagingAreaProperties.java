package dev.arrayd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** Slots of the staging area never overlap, stay inside the region, and all come back. */
class StagingAreaProperties {

    @Property(tries = 200)
    void slotsAreDisjointInsideTheRegionAndAllComeBack(
            @ForAll @Size(max = 60) List<@IntRange(min = 1, max = 5000) Integer> sizes,
            @ForAll @Size(max = 60) List<@IntRange(min = 0, max = 100) Integer> frees) {
        long size = 1 << 16;
        try (Arena arena = Arena.ofConfined()) {
            MappedRegion r = new MappedRegion(1, size, arena, arena.allocate(size), () -> { });
            StagingArea s = new StagingArea(r);
            List<long[]> held = new ArrayList<>();
            for (int i = 0; i < sizes.size(); i++) {
                long at = s.allocate(sizes.get(i));
                if (at >= 0) {
                    assertTrue(at % StagingArea.ALIGN == 0 && at + sizes.get(i) <= size, "inside: " + at);
                    for (long[] h : held) {
                        assertTrue(at + sizes.get(i) <= h[0] || h[0] + h[1] <= at, "disjoint: " + at + " vs " + h[0]);
                    }
                    held.add(new long[] {at, sizes.get(i)});
                }
                if (i < frees.size() && !held.isEmpty()) {
                    long[] h = held.remove(frees.get(i) % held.size());
                    s.release(h[0], h[1]);
                }
            }
            held.forEach(h -> s.release(h[0], h[1]));
            assertEquals(size, s.freeBytes());
            assertEquals(0, s.allocate(size), "one free block again");
        }
    }
}
