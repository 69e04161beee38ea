package dev.arrayd.scheduler;

import dev.arrayd.devices.api.support.GuardedBy;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The MSI states of a buffer's replicas, and how a command's access to a replica orders it: a read after the replica's
 * last writer, a write after that writer and every reader, leaving the written copy the only current one. Run under
 * the scheduler's submit lock, like {@link Coherence}, which decides what to move where.
 */
final class ReplicaStates {

    private ReplicaStates() {}

    /** MSI bookkeeping: a lone current copy is MODIFIED, several are SHARED. */
    static void normalize(Buffer b) {
        Replica twin = b.twin;
        if (twin != null && (twin.valid() || b.host.valid())) {
            // one memory: current through either means current through both
            twin.state = ReplicaState.SHARED;
            b.host.state = ReplicaState.SHARED;
        }
        int n = b.validCount();
        ReplicaState st = n == 1 ? ReplicaState.MODIFIED : ReplicaState.SHARED;
        for (Replica r : b.replicas) {
            if (r != null && r.valid()) {
                r.state = st;
            }
        }
        if (b.host.valid()) {
            b.host.state = st;
        }
    }

    /**
     * {@code d} lost its memory's contents: its replicas of data current elsewhere become invalid (their memory and
     * its users stay: the next transfer there is ordered after them); an only current copy stays current. Returns
     * how many were invalidated.
     */
    @GuardedBy("SchedulerContext.submitLock")
    static int forgetCopiesOn(DeviceRuntime d) {
        int n = 0;
        for (Replica r : List.copyOf(d.resident.keySet())) {
            if (r.valid() && r.buffer.validCount() > 1) {
                r.state = ReplicaState.INVALID;
                normalize(r.buffer);
                n++;
            }
        }
        return n;
    }

    /** A command that writes {@code r}'s memory: after its last writer (order) and all its readers. */
    static void writeOrder(Command c, Replica r) {
        r.orderWrite(c);
    }

    /**
     * Records a command's access to replica {@code r}: a read depends on its last writer (failure passes
     * on); a write orders after the writer and the readers, becomes the writer, and makes every other
     * copy stale. A write of part of the buffer ({@code whole} false) keeps the rest of the memory, so it
     * depends on the command that put the buffer's data there ({@link Replica#bytes()}) as on data: it does
     * not run over bytes that never arrived. A write of all of it puts them there.
     */
    static void access(Command c, Replica r, boolean reads, boolean writes, boolean whole) {
        Event w = r.ready();
        if (w != Event.SUCCEEDED && w.isDone() && !w.isFailed()) {
            r.ready(w = Event.SUCCEEDED);
        }
        if (reads) {
            c.dependOnInput(w);
        }
        if (writes) {
            if (whole) {
                r.bytes(c.event());
            } else {
                Event kept = r.bytes();
                if (kept != null) {
                    c.dependOnInput(kept);
                }
            }
            writeOrder(c, r);
            r.ready(c.event());
            wrote(r);
        } else {
            r.addReader(c.event());
        }
    }

    /**
     * Records a download of {@code source}'s buffer into {@code into}, bytes that share memory with the host memory
     * the buffer lives in (its own region bytes): a write of that memory, so it waits for the memory's last writer
     * and every reader (the device replica using it in place included) before it overwrites them, and later users
     * wait for it. Even one that reads the very bytes it would write (from that in-place replica, at the same
     * offset: nothing moves) is ordered so: its completion tells the client that every earlier command on the memory
     * is done and the memory holds the data. The buffer's whole data copied where it belongs leaves the host memory
     * current.
     */
    static void downloadIntoOwnMemory(Command c, Replica source, long offset, long size, MemorySegment into) {
        Buffer b = source.buffer;
        Replica host = b.host;
        host.orderWrite(c); // first: the read below may make it a reader of this same memory
        access(c, source, true, false, false);
        host.ready(c.event());
        MemorySegment own = b.hostMemory().memory();
        if (into.address() == own.address() + offset && offset == 0 && size == b.sizeBytes() && source.valid()) {
            host.state = ReplicaState.SHARED;
            normalize(b);
            hostMemoryFilled(b, source, c);
        }
    }

    /**
     * Records that an upload into {@code target}'s buffer reads bytes of the host memory the buffer lives in (its
     * own region bytes): a read of that memory, after its last writer (a launch on the replica that uses it in
     * place, say), and before its next one. An upload into that replica itself is a write of that memory, ordered
     * after its writer and readers already.
     */
    static void uploadFromOwnMemory(Command c, Replica target) {
        if (target.mapped) {
            return;
        }
        Replica host = target.buffer.host;
        c.dependOnInput(host.ready());
        host.addReader(c.event());
    }

    /**
     * {@code by} writes all of the host memory {@code b} lives in with the buffer's data (from {@code source}, or
     * null): that is what the replica using the memory in place holds too, unless it is the source itself (nothing
     * moves then), so its later part writes wait for {@code by} ({@link Replica#bytes()}).
     */
    static void hostMemoryFilled(Buffer b, Replica source, Event by) {
        if (b.twin != null && b.twin != source) {
            b.twin.bytes(by);
        }
    }

    /** After a write to {@code r}: it is the only current copy; the others are stale (host copy freed). */
    static void wrote(Replica r) {
        Buffer b = r.buffer;
        r.state = ReplicaState.MODIFIED;
        for (Replica o : b.replicas) {
            if (o != null && o != r) {
                o.state = ReplicaState.INVALID;
            }
        }
        if (r.mapped) {
            b.host.state = ReplicaState.SHARED; // written in place: the host memory is current too
            normalize(b);
        } else if (b.host.valid()) {
            ReplicaMemory.dropHost(b.host);
        }
    }

    /**
     * After the client wrote the host memory a buffer lives in ({@code c}, a host-written command): the
     * host copy is the current data, ordered after its readers; device replicas are stale, but for the one
     * that is that memory.
     */
    static void wroteHost(Command c, Buffer b) {
        Replica host = b.host;
        host.orderWrite(c);
        host.ready(c.event());
        hostMemoryFilled(b, null, c); // the client's bytes are the buffer's data
        for (Replica o : b.replicas) {
            if (o != null && o != b.twin) {
                o.state = ReplicaState.INVALID;
            }
        }
        host.state = ReplicaState.MODIFIED;
        normalize(b);
    }
}
