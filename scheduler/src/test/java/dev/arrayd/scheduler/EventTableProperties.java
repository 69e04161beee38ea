package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;

/** A session's event ids against a plain set of the ids used: reuse refused, ranges opened, lookups. */
class EventTableProperties {

    @Property(tries = 300)
    void idsAreCheckedAndRangesCountedAsASetOfUsedIdsSays(
            @ForAll @Size(max = 200) List<@LongRange(min = 1, max = 60) Long> ids,
            @ForAll @LongRange(min = 0, max = 1L << 40) long base) {
        EventTable t = new EventTable();
        Set<Long> used = new HashSet<>();
        for (long small : ids) {
            long id = base + small;
            if (used.contains(id)) {
                ArraydException e = assertThrows(ArraydException.class, () -> t.checkUnused(id, 0, false));
                assertEquals(ErrorCode.ALREADY_EXISTS, e.code());
                continue;
            }
            boolean opens = !used.contains(id - 1) && !used.contains(id + 1);
            assertEquals(opens, t.checkUnused(id, 0, false), "id " + id + " after " + used);
            Event e = new Event(id);
            t.register(e);
            used.add(id);
            assertSame(e, t.lookup(id));
        }
        for (long id = base; id <= base + 61; id++) {
            Event e = t.lookup(id);
            assertEquals(used.contains(id), e != null, "lookup of " + id);
        }
    }

    @Property(tries = 100)
    void countingUpNeverOpensMoreThanTheFirstRange(@ForAll @LongRange(min = 1, max = 1L << 40) long first,
            @ForAll @LongRange(min = 1, max = 500) long count) {
        EventTable t = new EventTable();
        for (long id = first; id < first + count; id++) {
            assertEquals(id == first, t.checkUnused(id, 0, false), "id " + id);
            Event e = new Event(id);
            t.register(e);
            e.succeed(0, null);
            t.settled(e);
            assertSame(Event.SUCCEEDED, t.lookup(id), "a settled success is remembered as one");
        }
        assertEquals(null, t.lookup(first + count));
        assertEquals(null, t.lookup(first - 1 == 0 ? first + count + 1 : first - 1));
    }
}
