package dev.arrayd.scheduler;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A map from {@code long} keys to non-null values, open addressing with linear probing: no boxed
 * {@code Long} key and no entry object per mapping. The scheduler looks up event ids, buffer and
 * kernel handles for every command, and a {@code HashMap<Long, V>} allocates a key (and a node on
 * insertion) each time; this does not allocate except when it grows.
 *
 * <p>Layout: parallel arrays {@code keys[]} / {@code values[]} of a power-of-two capacity, at most
 * half full; a null value marks a free slot (any key may be stored, 0 included). Removal shifts the
 * following entries of the probe run back (no tombstones), so lookups never slow down after many
 * removals, which is the life of an event table.
 *
 * <p>Not thread-safe: the owner guards it (see {@link LockedLongMap}).
 */
final class LongMap<V> {

    private static final int MIN_CAPACITY = 8;

    private long[] keys;
    private Object[] values;
    private int size;
    private int mask;

    LongMap() {
        this(MIN_CAPACITY);
    }

    /** @param expected mappings it should hold without growing */
    LongMap(int expected) {
        int cap = MIN_CAPACITY;
        while (cap < expected * 2L && cap < (1 << 30)) {
            cap <<= 1;
        }
        keys = new long[cap];
        values = new Object[cap];
        mask = cap - 1;
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** The value of {@code key}, or null. */
    @SuppressWarnings("unchecked")
    V get(long key) {
        long[] k = keys;
        Object[] v = values;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            Object o = v[i];
            if (o == null) {
                return null;
            }
            if (k[i] == key) {
                return (V) o;
            }
        }
    }

    boolean containsKey(long key) {
        return get(key) != null;
    }

    /** Maps {@code key} to {@code value} (not null); returns the previous value or null. */
    @SuppressWarnings("unchecked")
    V put(long key, V value) {
        if (value == null) {
            throw new NullPointerException("value");
        }
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            Object o = values[i];
            if (o == null) {
                keys[i] = key;
                values[i] = value;
                if (++size * 2 > values.length) {
                    grow();
                }
                return null;
            }
            if (keys[i] == key) {
                values[i] = value;
                return (V) o;
            }
        }
    }

    /** Maps {@code key} to {@code value} unless it is mapped; returns the value it had, or null (then it was put). */
    V putIfAbsent(long key, V value) {
        V had = get(key);
        if (had != null) {
            return had;
        }
        put(key, value);
        return null;
    }

    /** Removes {@code key}; returns its value, or null if it had none. */
    @SuppressWarnings("unchecked")
    V remove(long key) {
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            Object o = values[i];
            if (o == null) {
                return null;
            }
            if (keys[i] == key) {
                deleteAt(i);
                return (V) o;
            }
        }
    }

    /** Removes {@code key} only while it maps to {@code value} (by identity); true if it did. */
    boolean remove(long key, V value) {
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            Object o = values[i];
            if (o == null) {
                return false;
            }
            if (keys[i] == key) {
                if (o != value) {
                    return false;
                }
                deleteAt(i);
                return true;
            }
        }
    }

    /** A copy of the values, in no particular order. */
    @SuppressWarnings("unchecked")
    List<V> values() {
        List<V> out = new ArrayList<>(size);
        for (Object o : values) {
            if (o != null) {
                out.add((V) o);
            }
        }
        return out;
    }

    /** A copy of the keys, in no particular order. */
    long[] keys() {
        long[] out = new long[size];
        int n = 0;
        for (int i = 0; i < values.length; i++) {
            if (values[i] != null) {
                out[n++] = keys[i];
            }
        }
        return out;
    }

    void clear() {
        Arrays.fill(values, null);
        size = 0;
    }

    /** Backward-shift deletion: moves later entries of the run into the hole when their home slot allows. */
    private void deleteAt(int hole) {
        int i = hole;
        while (true) {
            i = (i + 1) & mask;
            Object o = values[i];
            if (o == null) {
                break;
            }
            int home = slot(keys[i], mask);
            // the entry at i may move to the hole unless its home lies cyclically in (hole, i]
            boolean stays = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
            if (!stays) {
                keys[hole] = keys[i];
                values[hole] = o;
                hole = i;
            }
        }
        values[hole] = null;
        size--;
    }

    private void grow() {
        long[] oldKeys = keys;
        Object[] oldValues = values;
        int cap = oldValues.length * 2;
        keys = new long[cap];
        values = new Object[cap];
        mask = cap - 1;
        for (int j = 0; j < oldValues.length; j++) {
            Object o = oldValues[j];
            if (o != null) {
                int i = slot(oldKeys[j], mask);
                while (values[i] != null) {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[j];
                values[i] = o;
            }
        }
    }

    /** Fibonacci hashing: sequential ids (the common case) spread over the table. */
    private static int slot(long key, int mask) {
        long h = key * 0x9E37_79B9_7F4A_7C15L;
        return (int) (h ^ (h >>> 32)) & mask;
    }
}
