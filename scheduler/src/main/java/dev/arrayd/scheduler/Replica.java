package dev.arrayd.scheduler;

import dev.arrayd.devices.api.MemRef;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One copy of a buffer: on a device (a block of its slab pool) or on the host (a native segment).
 * Carries the hazard state of that memory: {@link #ready}, the last command that wrote it (a
 * writer or a transfer into it), and the commands reading it since, transfers out included.
 * Guarded by the scheduler's submit lock.
 */
final class Replica {

    final Buffer buffer;
    /** null for the host copy. */
    final DeviceRuntime device;
    /** Device memory; null while not allocated (or after eviction). */
    MemRef mem;
    /** Host memory of the host copy; null while there is none. */
    MemorySegment host;
    Arena arena;
    ReplicaState state = ReplicaState.INVALID;
    Event ready = Event.SUCCEEDED;
    Event[] readers = new Event[2];
    int readerCount;

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

    private MemRef whole; // the buffer's bytes in `mem`, made once per allocation

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
