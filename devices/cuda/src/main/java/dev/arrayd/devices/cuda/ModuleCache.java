package dev.arrayd.devices.cuda;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Compiled PTX by {@link ModuleKey}, least recently used evicted beyond {@code capacity}: the same
 * CUDA C for the same architecture is compiled by NVRTC once per daemon (sessions often send the same
 * kernels). Only the text is cached; loading it into a context is per module and cheap beside NVRTC.
 */
final class ModuleCache {

    /** One compiled unit: the PTX, NVRTC's warnings, and the lowered name of each entry point. */
    record Entry(String ptx, String log, java.util.List<String> loweredNames) {}

    private final int capacity;
    private final LinkedHashMap<ModuleKey, Entry> entries;
    private long hits; // guarded by this
    private long misses; // guarded by this

    ModuleCache(int capacity) {
        this.capacity = capacity;
        this.entries = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<ModuleKey, ModuleCache.Entry> eldest) {
                return size() > ModuleCache.this.capacity;
            }
        };
    }

    synchronized Entry get(ModuleKey key) {
        Entry e = entries.get(key);
        if (e == null) {
            misses++;
        } else {
            hits++;
        }
        return e;
    }

    synchronized void put(ModuleKey key, Entry entry) {
        if (capacity > 0) {
            entries.put(key, entry);
        }
    }

    synchronized long hits() {
        return hits;
    }

    synchronized long misses() {
        return misses;
    }

    synchronized int size() {
        return entries.size();
    }
}
