package dev.arrayd.devices.remote;

import java.util.Map;
import java.util.TreeMap;

/**
 * The byte ranges of a slab whose data was lost with a peer's session: all of it when the slab is made again in a
 * new session, less what has been written since. Reading a lost byte is DATA_LOSS. Not thread-safe.
 */
final class LostRanges {

    /** start -> end (exclusive), disjoint and not touching. */
    private final TreeMap<Long, Long> ranges = new TreeMap<>();

    /** Everything in {@code [0, bytes)} is lost. */
    void loseAll(long bytes) {
        ranges.clear();
        if (bytes > 0) {
            ranges.put(0L, bytes);
        }
    }

    boolean isEmpty() {
        return ranges.isEmpty();
    }

    /** Whether any byte of {@code [offset, offset + length)} is lost. */
    boolean overlaps(long offset, long length) {
        if (length <= 0 || ranges.isEmpty()) {
            return false;
        }
        Map.Entry<Long, Long> before = ranges.floorEntry(offset);
        if (before != null && before.getValue() > offset) {
            return true;
        }
        Long next = ranges.higherKey(offset);
        return next != null && next < offset + length;
    }

    /** {@code [offset, offset + length)} was written: its bytes are valid again. */
    void written(long offset, long length) {
        if (length <= 0 || ranges.isEmpty()) {
            return;
        }
        long end = offset + length;
        Map.Entry<Long, Long> e = ranges.lowerEntry(end);
        while (e != null && e.getValue() > offset) {
            long s = e.getKey();
            long t = e.getValue();
            ranges.remove(s);
            if (s < offset) {
                ranges.put(s, offset);
            }
            if (t > end) {
                ranges.put(end, t);
            }
            e = ranges.lowerEntry(Math.min(s, end));
        }
    }
}
