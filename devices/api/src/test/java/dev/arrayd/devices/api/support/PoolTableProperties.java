package dev.arrayd.devices.api.support;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.TreeMap;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** The table agrees with a sorted map after every add and remove, and never changes in place. */
class PoolTableProperties {

    record TestSlab(int poolId, long bytes) implements PoolTable.Slab {
        TestSlab(int poolId) {
            this(poolId, 64);
        }
    }

    @Property(tries = 300)
    void behavesLikeASortedMap(@ForAll @Size(max = 60) List<@IntRange(min = -30, max = 30) Integer> ops) {
        PoolTable<TestSlab> table = PoolTable.empty();
        TreeMap<Integer, TestSlab> model = new TreeMap<>();
        for (int op : ops) {
            int id = Math.abs(op);
            PoolTable<TestSlab> before = table;
            int sizeBefore = before.size();
            if (op >= 0) {
                if (model.containsKey(id)) {
                    PoolTable<TestSlab> t = table;
                    assertThrows(IllegalStateException.class, () -> t.with(new TestSlab(id)));
                } else {
                    TestSlab s = new TestSlab(id);
                    table = table.with(s);
                    model.put(id, s);
                }
            } else {
                table = table.without(id);
                model.remove(id);
            }
            assertEquals(sizeBefore, before.size(), "the old table is unchanged");
            assertArrayEquals(model.keySet().stream().mapToInt(Integer::intValue).toArray(), table.ids());
            assertEquals(List.copyOf(model.values()), table.slabs());
            for (int probe = 0; probe <= 30; probe++) {
                assertSame(model.get(probe), table.find(probe));
            }
        }
    }
}
