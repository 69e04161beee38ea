package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.support.GuardedBy;
import java.util.Map;
import java.util.TreeMap;

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

    // Primitive-keyed: registered and settled once per command, looked up per wait.
    @GuardedBy("this")
    private final LongMap<Event> pending = new LongMap<>(64);
    @GuardedBy("this")
    private final LongMap<Event> failed = new LongMap<>();
    // The ids used so far change only as a submission of the session registers its commands, under the scheduler's
    // submit lock (its write side, or its read side with the session claimed: one at a time per session) and this
    // table's: a holder of either reads them. The submission's own checks (checkUnused, assign) run under the
    // submit lock alone, the lookups of other threads under this table's.
    /** Start to range (end inclusive, mutable so that a client counting up extends it without boxing). */
    @GuardedBy("SchedulerContext.submitLock and this")
    private final TreeMap<Long, Range> used = new TreeMap<>();
    /** The range with the highest start (null while none): ids that count up extend it, found without a tree search. */
    @GuardedBy("SchedulerContext.submitLock and this")
    private Range top;
    @GuardedBy("SchedulerContext.submitLock")
    private long nextAssigned = FIRST_ASSIGNED;

    /** Ids {@code [start, end]}, all used. */
    private static final class Range {
        final long start;
        long end;

        Range(long start, long end) {
            this.start = start;
            this.end = end;
        }
    }

    /** Takes the next server-assigned id; under the submit lock. */
    long assign() {
        return nextAssigned++;
    }

    /** Throws unless {@code id} is in the client's range [1, 2^62). */
    static void checkClientId(long id, String what) {
        if (id <= 0 || id >= FIRST_ASSIGNED) {
            throw new ArraydException(ErrorCode.INVALID_ARGUMENT,
                    what + ": " + id + " (expected: 1 <= id < 2^62, or 0 to have ids assigned)");
        }
    }

    /**
     * Throws unless {@code id} is a client id not used yet, and its range fits the limit: {@code opened} is how
     * many new ranges the ids before it in the same batch open (they are registered only once the whole batch
     * passed), {@code nextToBatch} whether it touches one of those ids. Returns whether it opens a range. Under
     * the submit lock.
     */
    boolean checkUnused(long id, int opened, boolean nextToBatch) {
        if (id <= 0 || id >= FIRST_ASSIGNED) {
            throw new ArraydException(ErrorCode.INVALID_ARGUMENT,
                    "event: " + id + " (expected: 1 <= id < 2^62, or 0 to have one assigned)");
        }
        if (isUsed(id)) {
            throw new ArraydException(ErrorCode.ALREADY_EXISTS, "event: " + id + " (already used in this session)");
        }
        boolean opens = !nextToBatch && !touchesRange(id);
        if (opens && used.size() + opened >= MAX_RANGES) {
            throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED,
                    "event: " + id + ": too many gaps between this session's event ids (limit " + MAX_RANGES
                            + " ranges); use consecutive ids");
        }
        return opens;
    }

    /** Registers a new pending event whose id passed {@link #checkUnused} or came from {@link #assign}; under the submit lock. */
    synchronized void register(Event e) {
        long id = e.id();
        Range t = top;
        if (t != null && t.end == id - 1) {
            t.end = id; // counting up: nothing above the top range to join
        } else if (t == null || id > t.end) {
            top = new Range(id, id);
            used.put(id, top);
        } else {
            registerBelowTop(id);
        }
        pending.put(id, e);
    }

    private void registerBelowTop(long id) {
        Map.Entry<Long, Range> left = used.floorEntry(id);
        Map.Entry<Long, Range> right = used.ceilingEntry(id);
        boolean joinLeft = left != null && left.getValue().end == id - 1;
        boolean joinRight = right != null && right.getKey() == id + 1;
        if (joinLeft && joinRight) {
            used.remove(right.getKey());
            left.getValue().end = right.getValue().end;
            if (right.getValue() == top) {
                top = left.getValue();
            }
        } else if (joinLeft) {
            left.getValue().end = id;
        } else if (joinRight) {
            Range r = used.remove(right.getKey());
            Range joined = new Range(id, r.end);
            used.put(id, joined);
            if (r == top) {
                top = joined;
            }
        } else {
            used.put(id, new Range(id, id));
        }
    }

    /** Called when a registered event completes: forget it unless it failed. */
    synchronized void settled(Event e) {
        if (e.isFailed()) {
            failed.put(e.id(), e);
        }
        pending.remove(e.id(), e);
    }

    /** The event with this id, {@link Event#SUCCEEDED} for one that succeeded and was forgotten, or null if never used. */
    synchronized Event lookup(long id) {
        Event e = pending.get(id);
        if (e != null) {
            return e;
        }
        e = failed.get(id);
        if (e != null) {
            return e;
        }
        // a used id in neither map has succeeded (settled() records failures as it forgets them)
        return isUsed(id) ? Event.SUCCEEDED : null;
    }

    synchronized int pendingCount() {
        return pending.size();
    }

    /** A snapshot of the pending events. */
    synchronized Iterable<Event> pendingEvents() {
        return pending.values();
    }

    private boolean isUsed(long id) {
        Range t = top;
        if (t == null || id > t.end) {
            return false;
        }
        if (id >= t.start) {
            return true;
        }
        Map.Entry<Long, Range> r = used.floorEntry(id);
        return r != null && r.getValue().end >= id;
    }

    private boolean touchesRange(long id) {
        Range t = top;
        if (t != null && id > t.end) {
            return t.end == id - 1; // above every range: only the top one can touch it (ids counting up)
        }
        Map.Entry<Long, Range> left = used.floorEntry(id);
        Map.Entry<Long, Range> right = used.ceilingEntry(id);
        return (left != null && left.getValue().end == id - 1) || (right != null && right.getKey() == id + 1);
    }
}
