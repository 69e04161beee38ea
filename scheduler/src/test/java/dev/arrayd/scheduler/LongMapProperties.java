package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * {@link LongMap} behaves like a {@code java.util.HashMap<Long, V>} under random puts and removes. Keys are
 * drawn from a small range (many collisions, long probe runs, removals inside runs) plus far-apart ones.
 */
class LongMapProperties {

    @Property(tries = 300)
    void behavesLikeHashMap(@ForAll @Size(min = 1, max = 400) List<@IntRange(min = 0, max = 5) Integer> ops,
            @ForAll @Size(min = 1, max = 400) List<@IntRange(min = -64, max = 64) Integer> keySeeds) {
        LongMap<String> map = new LongMap<>();
        Map<Long, String> model = new HashMap<>();
        for (int i = 0; i < ops.size(); i++) {
            int seed = keySeeds.get(i % keySeeds.size());
            long key = seed % 3 == 0 ? seed * 0x1_0000_0000L : seed; // also keys that differ only in high bits
            String value = "v" + i;
            switch (ops.get(i)) {
                case 0, 1 -> assertEquals(model.put(key, value), map.put(key, value), "put " + key);
                case 2 -> assertEquals(model.remove(key), map.remove(key), "remove " + key);
                case 3 -> {
                    String have = model.get(key);
                    boolean removed = have != null && map.remove(key, have);
                    assertEquals(have != null, removed, "remove(key, value) " + key);
                    model.remove(key);
                    assertEquals(false, map.remove(key, "other"), "remove(key, other) " + key);
                }
                case 4 -> assertEquals(model.putIfAbsent(key, value), map.putIfAbsent(key, value), "putIfAbsent " + key);
                default -> assertEquals(model.get(key), map.get(key), "get " + key);
            }
            assertEquals(model.size(), map.size(), "size");
        }
        for (long k = -64 * 0x1_0000_0000L; k <= 64 * 0x1_0000_0000L; k += 0x1_0000_0000L) {
            assertEquals(model.get(k), map.get(k), "get " + k);
        }
        for (long k = -64; k <= 64; k++) {
            assertEquals(model.get(k), map.get(k), "get " + k);
            assertEquals(model.containsKey(k), map.containsKey(k), "containsKey " + k);
        }
        long[] keys = map.keys();
        Arrays.sort(keys);
        assertEquals(Arrays.toString(model.keySet().stream().mapToLong(Long::longValue).sorted().toArray()),
                Arrays.toString(keys), "keys");
        List<String> values = new ArrayList<>(map.values());
        List<String> expected = new ArrayList<>(model.values());
        values.sort(null);
        expected.sort(null);
        assertEquals(expected, values, "values");
    }
}
