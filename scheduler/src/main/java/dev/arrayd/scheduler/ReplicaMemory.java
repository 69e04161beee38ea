package dev.arrayd.scheduler;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The memory behind replicas: freeing a device replica's memory or a host copy once their last users are done (slab
 * pool fences, arenas closed after their readers), and making host copies (of zeros and padding for a new buffer, of
 * an upload's bytes). Run under the scheduler's submit lock, like {@link Coherence}, whose decisions these carry out.
 */
final class ReplicaMemory {

    private ReplicaMemory() {}

    /** Frees every replica of a released buffer, host copy included (memory reused after its last users). */
    static void dropAll(Buffer b) {
        for (Replica r : b.replicas) {
            if (r != null && !r.mapped) {
                drop(r);
            }
        }
        if (b.hostMemory() == null) {
            dropHost(b.host);
            return;
        }
        // host memory used in place: given back (and unmapped from its device) after its last users
        Replica host = b.host;
        Replica twin = b.twin;
        HostMemory memory = b.hostMemory();
        Event.whenAllDone(host.users(), () -> {
            if (twin != null) {
                twin.device.device().unmapHost(twin.mem);
            }
            memory.release().run();
        });
        if (twin != null) {
            twin.state = ReplicaState.INVALID;
        }
        host.state = ReplicaState.INVALID;
        host.resetHazards();
    }

    /** Frees a device replica's memory (reused after its last users) and marks it invalid. */
    static void drop(Replica r) {
        if (r.mapped) {
            throw new IllegalStateException(r + ": host memory used in place is never dropped, only released with its buffer");
        }
        if (r.mem != null) {
            r.device.pool().free(r.mem, r.users());
            r.device.resident.remove(r);
            r.mem = null;
        }
        r.state = ReplicaState.INVALID;
        r.resetHazards();
    }

    /** Frees the host copy's memory once its last users are done, and marks it invalid. */
    static void dropHost(Replica host) {
        if (host.buffer.hostMemory() != null) {
            host.state = ReplicaState.INVALID; // the memory stays, and so do its users (later writes wait for them)
            return;
        }
        if (host.arena != null) {
            Arena arena = host.arena;
            Event.whenAllDone(host.users(), arena::close);
        }
        host.arena = null;
        host.host = null;
        host.state = ReplicaState.INVALID;
        host.resetHazards();
    }

    /**
     * Replaces the host copy with {@code data} (a whole-buffer upload of a HOSTED_VOLATILE buffer): the
     * bytes are copied now, into new memory, so readers of the old host copy are unaffected.
     */
    static void replaceHost(Buffer b, MemorySegment data) {
        Replica host = b.host;
        dropHost(host);
        Arena arena = Arena.ofShared();
        MemorySegment seg = arena.allocate(Math.max(1, b.sizeBytes()), 64).asSlice(0, b.sizeBytes());
        MemorySegment.copy(data, 0, seg, 0, b.sizeBytes());
        host.arena = arena;
        host.host = seg;
        host.ready(Event.SUCCEEDED);
        host.state = ReplicaState.SHARED;
    }

    /** The padding value over all of {@code seg}, then zeros over the interior (a padded buffer's first contents). */
    private static void padHost(MemorySegment seg, Layout layout, int width, long pad) {
        for (int i = 0; i < width; i++) {
            seg.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (pad >>> (8 * i)));
        }
        for (long done = width; done < seg.byteSize(); done *= 2) {
            MemorySegment.copy(seg, 0, seg, done, Math.min(done, seg.byteSize() - done));
        }
        long count = layout.elements();
        for (long i = 0, n = layout.pieces(0, count); i < n; i++) {
            Layout.Piece p = layout.piece(0, count, i);
            seg.asSlice(p.storage() * width, p.length() * width).fill((byte) 0);
        }
    }

    /** A host copy of zeros, with its padding for a padded buffer (a new HOSTED_CHANGED_ON_DEVICES buffer). */
    static void zeroHost(Buffer b) {
        Replica host = b.host;
        Arena arena = Arena.ofShared();
        host.arena = arena;
        host.host = arena.allocate(Math.max(1, b.sizeBytes()), 64).asSlice(0, b.sizeBytes());
        long pad = b.padPattern();
        if (pad != 0) {
            padHost(host.host, b.layout(), b.dtype().byteSize(), pad);
        }
        host.ready(Event.SUCCEEDED);
        host.state = ReplicaState.SHARED;
    }
}
