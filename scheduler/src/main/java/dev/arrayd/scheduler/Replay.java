package dev.arrayd.scheduler;

import java.util.Map;

/**
 * What a graph replay changes in its recorded commands ({@link #NONE} for a submission): applied while
 * they are checked and tracked, so that a replay allocates nothing per command for them.
 *
 * @param firstEvent    command {@code i} signals {@code firstEvent + i}; 0 = its spec's id (0 for a graph: assigned)
 * @param waits         what commands waiting on no other command of the graph wait for; null = their spec's waits
 * @param deadlineNanos a deadline for every command, combined with its own
 * @param swap          buffers rebound (and LOCAL scratch made fresh), or null for none
 * @param templates     per command, a template with new scalar values; null when none changed
 */
record Replay(long firstEvent, long[] waits, long deadlineNanos, Map<Buffer, Buffer> swap, CommandTemplate[] templates) {

    static final Replay NONE = new Replay(0, null, CommandSpec.NO_DEADLINE, null, null);

    long id(Prepared p, int i) {
        return firstEvent != 0 ? firstEvent + i : p.spec().event();
    }

    long[] waits(Prepared p) {
        return waits != null && p.after().length == 0 ? waits : p.spec().waits();
    }

    long deadlineNanos(Prepared p) {
        return Math.min(p.spec().deadlineNanos(), deadlineNanos);
    }

    /** The command's buffers; a copy only when some are rebound. */
    Buffer[] buffers(Prepared p) {
        if (swap == null) {
            return p.buffers();
        }
        Buffer[] out = p.buffers().clone();
        for (int b = 0; b < out.length; b++) {
            if (out[b] != null) {
                out[b] = swap.getOrDefault(out[b], out[b]);
            }
        }
        return out;
    }

    CommandTemplate template(Prepared p, int i) {
        return templates == null ? p.template() : templates[i];
    }
}
