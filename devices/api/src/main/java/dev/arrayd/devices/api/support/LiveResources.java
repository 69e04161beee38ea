package dev.arrayd.devices.api.support;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The long-lived objects that hold memory or work (a device's slab ledger, a scheduler), registered when
 * they are made, so that whoever made them can ask, afterwards, whether they let everything go: the test
 * suites check after every test that what the test made holds no slab bytes and no pending event
 * ({@link #leftoversSince}). Weakly held: an object nobody references any more is forgotten. Registering
 * costs one list insertion per object made; commands and buffers are not tracked.
 */
public final class LiveResources {

    /** Something that may hold what it should have released. */
    public interface Resource {
        /** What it still holds, e.g. {@code "cpu:0: 4096 bytes in 1 slab"}; empty when nothing. */
        Optional<String> leftover();
    }

    private record Entry(long sequence, WeakReference<Resource> resource) {}

    private static final List<Entry> ENTRIES = new ArrayList<>();
    private static long sequence;

    private LiveResources() {}

    /** Registers {@code r} (at construction). */
    public static synchronized void register(Resource r) {
        ENTRIES.removeIf(e -> e.resource().get() == null);
        ENTRIES.add(new Entry(++sequence, new WeakReference<>(r)));
    }

    /** The current position: objects registered after it are those {@link #leftoversSince} looks at. */
    public static synchronized long mark() {
        return sequence;
    }

    /** What the objects registered after {@code mark} still hold. */
    public static List<String> leftoversSince(long mark) {
        List<Resource> since = new ArrayList<>();
        synchronized (LiveResources.class) {
            for (Entry e : ENTRIES) {
                Resource r = e.resource().get();
                if (e.sequence() > mark && r != null) {
                    since.add(r);
                }
            }
        }
        List<String> out = new ArrayList<>();
        for (Resource r : since) { // outside the lock: a resource may take its own locks to answer
            r.leftover().ifPresent(out::add);
        }
        return out;
    }
}
