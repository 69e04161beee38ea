package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The event ids of one session. Clients choose ids in {@code [1, 2^62)}, unique within the
 * session; a request that leaves the id 0 gets one assigned from {@code 2^62} up, so the two
 * never collide. The set of ids ever used is kept as disjoint ranges (one range for a client
 * that counts 1, 2, 3, ...). Only pending and failed events are kept as objects: an id that was
 * used and is neither pending nor failed has succeeded.
 */
final class EventTable {

    /** First server-assigned id; client ids stay below it. */
    static final long FIRST_ASSIGNED = 1L << 62;

    /** Bounds the memory a client with sparse ids can make us hold. */
    static final int MAX_RANGES = 1 << 16;

    private final ConcurrentHashMap<Long, Event> pending = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, Event> failed = new ConcurrentHashMap<>();
    private final TreeMap<Long, Long> used = new TreeMap<>(); // start -> end, inclusive; guarded by this
    private long nextAssigned = FIRST_ASSIGNED;

    /** Takes the next server-assigned id. */
    synchronized long assign() {
        return nextAssigned++;
    }

    /** Throws unless {@code id} is in the client's range [1, 2^62). */
    static void checkClientId(long id, String what) {
        if (id <= 0 || id >= FIRST_ASSIGNED) {
            throw new ArraydException(ErrorCode.INVALID_ARGUMENT,
                    what + ": " + id + " (expected: 1 <= id < 2^62, or 0 to have ids assigned)");
        }
    }

    /** Throws unless {@code id} is a client id not used yet. */
    synchronized void checkUnused(long id) {
        if (id <= 0 || id >= FIRST_ASSIGNED) {
            throw new ArraydException(ErrorCode.INVALID_ARGUMENT,
                    "event: " + id + " (expected: 1 <= id < 2^62, or 0 to have one assigned)");
        }
        if (isUsed(id)) {
            throw new ArraydException(ErrorCode.ALREADY_EXISTS, "event: " + id + " (already used in this session)");
        }
        if (used.size() >= MAX_RANGES && !touchesRange(id)) {
            throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED,
                    "event: " + id + ": too many gaps between this session's event ids (limit " + MAX_RANGES
                            + " ranges); use consecutive ids");
        }
    }

    /** Registers a new pending event whose id passed {@link #checkUnused} or came from {@link #assign}. */
    synchronized void register(Event e) {
        long id = e.id();
        Map.Entry<Long, Long> left = used.floorEntry(id);
        Map.Entry<Long, Long> right = used.ceilingEntry(id);
        boolean joinLeft = left != null && left.getValue() == id - 1;
        boolean joinRight = right != null && right.getKey() == id + 1;
        if (joinLeft && joinRight) {
            used.remove(right.getKey());
            used.put(left.getKey(), right.getValue());
        } else if (joinLeft) {
            used.put(left.getKey(), id);
        } else if (joinRight) {
            used.remove(right.getKey());
            used.put(id, right.getValue());
        } else {
            used.put(id, id);
        }
        pending.put(id, e);
    }

    /** Called when a registered event completes: forget it unless it failed. */
    void settled(Event e) {
        if (e.isFailed()) {
            failed.put(e.id(), e);
        }
        pending.remove(e.id(), e);
    }

    /** The event with this id, {@link Event#SUCCEEDED} for one that succeeded and was forgotten, or null if never used. */
    Event lookup(long id) {
        Event e = pending.get(id);
        if (e != null) {
            return e;
        }
        e = failed.get(id);
        if (e != null) {
            return e;
        }
        // settled() adds to `failed` before removing from `pending`, so a used id found in
        // neither map has succeeded.
        synchronized (this) {
            return isUsed(id) ? Event.SUCCEEDED : null;
        }
    }

    int pendingCount() {
        return pending.size();
    }

    Iterable<Event> pendingEvents() {
        return pending.values();
    }

    private boolean isUsed(long id) {
        Map.Entry<Long, Long> r = used.floorEntry(id);
        return r != null && r.getValue() >= id;
    }

    private boolean touchesRange(long id) {
        Map.Entry<Long, Long> left = used.floorEntry(id);
        Map.Entry<Long, Long> right = used.ceilingEntry(id);
        return (left != null && left.getValue() == id - 1) || (right != null && right.getKey() == id + 1);
    }
}
