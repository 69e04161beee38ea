package dev.arrayd.devices.opencl;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Program binaries of one device, by hash of the exact source (and build options) given to the
 * driver; least recently used first out. In memory only: a binary is tied to this driver and
 * device, and PoCL keeps its own on-disk cache ({@code POCL_CACHE_DIR}) across restarts.
 */
final class BinaryCache {

    private final int capacity;
    private final Map<String, byte[]> entries; // guarded by this
    private long hits; // guarded by this

    BinaryCache(int capacity) {
        this.capacity = capacity;
        this.entries = new LinkedHashMap<>(16, 0.75f, true);
    }

    synchronized byte[] get(String hash) {
        byte[] b = entries.get(hash);
        if (b != null) {
            hits++;
        }
        return b;
    }

    synchronized void put(String hash, byte[] binary) {
        if (capacity == 0 || binary == null || binary.length == 0) {
            return;
        }
        entries.put(hash, binary);
        while (entries.size() > capacity) {
            entries.remove(entries.keySet().iterator().next());
        }
    }

    /** Lookups that found a binary; for tests and diagnostics. */
    synchronized long hits() {
        return hits;
    }

    synchronized int size() {
        return entries.size();
    }
}
