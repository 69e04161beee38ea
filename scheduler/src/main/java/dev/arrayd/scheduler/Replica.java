package dev.arrayd.scheduler;

import dev.arrayd.devices.api.support.GuardedBy;
import dev.arrayd.devices.api.MemRef;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One copy of a buffer: on a device (a block of its slab pool) or on the host (a native segment).
 * Carries the hazard state of that memory: {@link #ready}, the last command that wrote it (a
 * writer or a transfer into it), and the commands reading it since, transfers out included.
 * Only {@link Coherence} changes it.
 */
final class Replica {

    final Buffer buffer;
    /** null for the host copy. */
    final DeviceRuntime device;
    /** Device memory; null while not allocated (or after eviction). */
    @GuardedBy("SchedulerContext.submitLock")
    MemRef mem;
    /** Host memory of the host copy; null while there is none. */
    @GuardedBy("SchedulerContext.submitLock")
    MemorySegment host;
    @GuardedBy("SchedulerContext.submitLock")
    Arena arena;
    @GuardedBy("SchedulerContext.submitLock")
    ReplicaState state = ReplicaState.INVALID;
    /** The last command that wrote this memory (of {@link #hazards}). */
    @GuardedBy("SchedulerContext.submitLock")
    private Event ready = Event.SUCCEEDED;
    /**
     * The command that last put the buffer's data into the whole of this memory: the transfer that made it current,
     * a write of the whole buffer, the zero fill of a new buffer; null while the memory holds none of it (just
     * allocated). A command that writes only part of it keeps the rest, so it depends on this one as on data: when
     * that did not run, the rest is not the buffer's (new memory may hold what another buffer left there).
     */
    @GuardedBy("SchedulerContext.submitLock")
    private Event bytes;
    /** The commands reading it since, finished ones pruned as new ones come (of {@link #hazards}). */
    @GuardedBy("SchedulerContext.submitLock")
    private Event[] readers = new Event[2];
    @GuardedBy("SchedulerContext.submitLock")
    private int readerCount;
    /**
     * Whose hazard state this replica's memory has: itself, or — for a device replica that is the host
     * copy's memory used in place ({@link #mapped}) — the host copy, so that a write through either waits
     * for the readers of both.
     */
    @GuardedBy("SchedulerContext.submitLock")
    private Replica hazards = this;
    /** A device replica whose memory is the buffer's host memory, used in place (never evicted, not from the pool). */
    @GuardedBy("SchedulerContext.submitLock")
    boolean mapped;
    /**
     * Used by a session-local submission ({@link SessionLocal}) since the last eviction on its device: those
     * run beside each other under the submit lock's read side and may not reorder the device's LRU list, so
     * the next eviction moves this replica to its recent end first ({@link Coherence}).
     */
    @GuardedBy("SchedulerContext.submitLock (read side with its buffer's session, or write side)")
    boolean usedLocally;
    /** The buffer's bytes in {@link #mem}, made once per allocation. */
    @GuardedBy("SchedulerContext.submitLock")
    private MemRef whole;

    Replica(Buffer buffer, DeviceRuntime device) {
        this.buffer = buffer;
        this.device = device;
    }

    boolean isHost() {
        return device == null;
    }

    boolean valid() {
        return state != ReplicaState.INVALID;
    }

    boolean allocated() {
        return mem != null || host != null;
    }

    /** This device replica is {@code host}'s memory: from now on both have one hazard state. */
    void useHostMemoryOf(Replica host, MemRef ref) {
        mem = ref;
        mapped = true;
        hazards = host;
    }

    /** The last command that wrote this memory ({@link Event#SUCCEEDED} when none is pending). */
    Event ready() {
        return hazards.ready;
    }

    void ready(Event e) {
        hazards.ready = e;
    }

    /** The command that last put the buffer's data into all of this memory (see {@link #bytes}); null for none. */
    Event bytes() {
        Event b = bytes;
        if (b != null && b != Event.SUCCEEDED && b.isDone() && !b.isFailed()) {
            bytes = b = Event.SUCCEEDED; // (holds on to no finished command)
        }
        return b;
    }

    void bytes(Event e) {
        bytes = e;
    }

    /** Drops finished readers, then adds {@code e}. */
    void addReader(Event e) {
        Replica h = hazards;
        int n = 0;
        for (int i = 0; i < h.readerCount; i++) {
            if (!h.readers[i].isDone()) {
                h.readers[n++] = h.readers[i];
            }
        }
        for (int i = n; i < h.readerCount; i++) {
            h.readers[i] = null;
        }
        if (n == h.readers.length) {
            h.readers = java.util.Arrays.copyOf(h.readers, Math.max(2, n * 2));
        }
        h.readers[n++] = e;
        h.readerCount = n;
    }

    /** Everything still using this memory: its last writer and its readers (not yet done). */
    java.util.List<Event> users() {
        Replica h = hazards;
        java.util.List<Event> out = new java.util.ArrayList<>(h.readerCount + 1);
        if (!h.ready.isDone()) {
            out.add(h.ready);
        }
        for (int i = 0; i < h.readerCount; i++) {
            if (!h.readers[i].isDone()) {
                out.add(h.readers[i]);
            }
        }
        return out;
    }

    /** A command writing this memory: ordered after its last writer and every reader (which it replaces). */
    void orderWrite(Command c) {
        Replica h = hazards;
        c.dependOnOrder(h.ready);
        for (int i = 0; i < h.readerCount; i++) {
            c.dependOnOrder(h.readers[i]);
        }
        h.clearOwnReaders();
    }

    /** Forgets the hazard state (the memory is no longer this replica's): no writer pending, no readers. */
    void resetHazards() {
        hazards.ready = Event.SUCCEEDED;
        hazards.clearOwnReaders();
    }

    private void clearOwnReaders() {
        java.util.Arrays.fill(readers, 0, readerCount, null);
        readerCount = 0;
    }

    /** Device memory of bytes {@code [offset, offset + bytes)} of the buffer. */
    MemRef data(long offset, long bytes) {
        if (offset == 0 && bytes == buffer.sizeBytes()) {
            return whole();
        }
        return new MemRef(mem.poolId(), mem.offset() + offset, bytes);
    }

    /** Device memory of the whole buffer (its block without the alignment padding). */
    MemRef whole() {
        MemRef w = whole;
        if (w == null || w.poolId() != mem.poolId() || w.offset() != mem.offset()) {
            w = whole = new MemRef(mem.poolId(), mem.offset(), buffer.sizeBytes());
        }
        return w;
    }

    String where() {
        return device == null ? "host" : device.id().toString();
    }

    @Override
    public String toString() {
        return buffer + " replica on " + where() + " (" + state.letter() + ")";
    }
}
