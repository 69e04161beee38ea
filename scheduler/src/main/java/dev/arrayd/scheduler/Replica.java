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
    /** The last command that wrote this memory. */
    @GuardedBy("SchedulerContext.submitLock")
    Event ready = Event.SUCCEEDED;
    /** The commands reading it since (finished ones pruned as new ones come). */
    @GuardedBy("SchedulerContext.submitLock")
    Event[] readers = new Event[2];
    @GuardedBy("SchedulerContext.submitLock")
    int readerCount;
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

    /** Drops finished readers, then adds {@code e}. */
    void addReader(Event e) {
        int n = 0;
        for (int i = 0; i < readerCount; i++) {
            if (!readers[i].isDone()) {
                readers[n++] = readers[i];
            }
        }
        for (int i = n; i < readerCount; i++) {
            readers[i] = null;
        }
        if (n == readers.length) {
            readers = java.util.Arrays.copyOf(readers, Math.max(2, n * 2));
        }
        readers[n++] = e;
        readerCount = n;
    }

    /** Everything still using this memory: its last writer and its readers (not yet done). */
    java.util.List<Event> users() {
        java.util.List<Event> out = new java.util.ArrayList<>(readerCount + 1);
        if (!ready.isDone()) {
            out.add(ready);
        }
        for (int i = 0; i < readerCount; i++) {
            if (!readers[i].isDone()) {
                out.add(readers[i]);
            }
        }
        return out;
    }

    void clearReaders() {
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
