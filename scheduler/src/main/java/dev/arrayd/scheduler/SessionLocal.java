package dev.arrayd.scheduler;

import dev.arrayd.devices.api.MemRef;

/**
 * Which submissions touch only their session's own state, and so are registered under the submit lock's read
 * side (one at a time per session: {@link Session#tryEnterLocal}), beside other sessions' submissions, instead of under
 * its write side: batches of launches on one named device whose buffers are the session's own ({@link Buffer#shared}
 * never set), {@link MemoryMode#DEVICE} buffers in no host memory, each with memory on the launch's device
 * already and current there when the launch reads it. Such a launch allocates, evicts, moves and rewrites
 * nothing; it changes its stream's tail, its session's events and its buffers' replicas on that device (and,
 * when it writes, their other replicas' states), all of which only the session's own submissions and
 * submissions under the write side change.
 *
 * <p>Everything else — placement, transfers, allocation and eviction, merge copies, per-stream instances,
 * host-resident and shared buffers, graph replays — goes under the write side, as does a launch once any of the
 * conditions fails, which it then checks again under that side.
 */
final class SessionLocal {

    private SessionLocal() {}

    /**
     * Whether every command may qualify, judged without any lock from what does not change after validation (an
     * empty batch does not: the write side answers it as before).
     */
    static boolean mayApply(Prepared[] prepared) {
        if (prepared.length == 0) {
            return false;
        }
        for (Prepared p : prepared) {
            if (p.placeAmong() != null || !(p.template() instanceof CommandTemplate.Launch) || p.kernel() == null) {
                return false;
            }
            for (Buffer b : p.buffers()) {
                if (b == null || b.perStream || b.memoryMode() != MemoryMode.DEVICE || b.hostMemory() != null
                        || b.shared) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Whether the commands qualify now, under the submit lock's read side, {@code s} entered: the scheduler
     * and the session still accept work, every command runs on one device (a write on one device would make
     * another's replica that a later command of the batch reads stale, which needs a transfer), and every
     * buffer's replica on that device has memory that is not the host's and holds current data where the
     * command needs it; a written buffer has no host copy to drop (freeing host memory is the write side's).
     */
    @dev.arrayd.devices.api.support.GuardedBy("SchedulerContext.submitLock (read side) and s.tryEnterLocal")
    static boolean applies(SchedulerContext ctx, Session s, Prepared[] prepared) {
        if (ctx.draining() || s.closed) {
            return false; // (the write side says why)
        }
        DeviceRuntime d = prepared[0].stream().device();
        for (Prepared p : prepared) {
            if (p.stream().device() != d) {
                return false;
            }
            Buffer[] bufs = p.buffers();
            boolean[] reads = p.reads();
            boolean[] writes = p.writes();
            boolean[] whole = p.whole();
            for (int k = 0; k < bufs.length; k++) {
                Buffer b = bufs[k];
                if (b.destroyed || b.hostMemory() != null) { // (shared: mayApply; it is set before another session can submit)
                    return false;
                }
                Replica r = b.replicaOrNull(d);
                if (r == null || r.mem == null || r.mapped) {
                    return false;
                }
                boolean needData = reads[k] || (writes[k] && !whole[k]);
                if ((needData && !r.valid()) || (writes[k] && b.host.valid())) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Each buffer's replica on {@code d} into {@code reps} and its memory into {@code refs} (they qualified). */
    static void replicas(DeviceRuntime d, Buffer[] bufs, Replica[] reps, MemRef[] refs) {
        for (int k = 0; k < bufs.length; k++) {
            Replica r = bufs[k].replicaOrNull(d);
            r.usedLocally = true;
            reps[k] = r;
            refs[k] = r.data(0, bufs[k].sizeBytes());
        }
    }
}
