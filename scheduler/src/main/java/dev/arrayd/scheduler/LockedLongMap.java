package dev.arrayd.scheduler;

import java.util.List;

/**
 * A {@link LongMap} behind its own lock: the session's handle tables (buffers, kernels, streams,
 * graphs), read for every command by whichever thread submits it. The lock is held for one probe;
 * a session's commands mostly come from one thread, so it is uncontended, and unlike a
 * {@code ConcurrentHashMap<Long, V>} a lookup allocates nothing (no boxed key).
 * {@link #values()} and {@link #keys()} are snapshots.
 */
final class LockedLongMap<V> {

    private final LongMap<V> map = new LongMap<>();

    synchronized V get(long key) {
        return map.get(key);
    }

    synchronized boolean containsKey(long key) {
        return map.containsKey(key);
    }

    synchronized V put(long key, V value) {
        return map.put(key, value);
    }

    synchronized V putIfAbsent(long key, V value) {
        return map.putIfAbsent(key, value);
    }

    synchronized V remove(long key) {
        return map.remove(key);
    }

    synchronized boolean remove(long key, V value) {
        return map.remove(key, value);
    }

    synchronized int size() {
        return map.size();
    }

    synchronized boolean isEmpty() {
        return map.isEmpty();
    }

    synchronized void clear() {
        map.clear();
    }

    synchronized List<V> values() {
        return map.values();
    }

    synchronized long[] keys() {
        return map.keys();
    }
}
