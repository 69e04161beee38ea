package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.support.GuardedBy;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Keeps the replicas of buffers coherent for one submission (OCANNL's {@code prepare_read} /
 * {@code prepare_write}, StarPU's MSI data management); with {@link ReplicaStates} (MSI states, how an access
 * orders a command) and {@link ReplicaMemory} (freeing replicas' memory, host copies), the only code that writes
 * replica state.
 * Everything here runs under the scheduler's submit lock; the transfer commands it creates are
 * collected in {@link #created} and released by the caller after the lock.
 *
 * <h2>Transfers</h2>
 * A command that reads a replica that is not current gets a transfer into it first, from the cheapest
 * current copy: straight from another device when the target device can copy from it
 * ({@code Device.canCopyFrom}), from the host copy when there is one, else through host memory (a
 * download on the source device, then an upload on the target's stream). A transfer reads its source
 * (so the next write there waits for it) and writes its target (so it waits for that memory's readers
 * and last writer, and for the fences of an allocation that reused evicted memory).
 *
 * <h2>Eviction</h2>
 * When a device's budget cannot hold a new replica, resident replicas not used by the command at hand
 * are dropped, least recently used first: stale ones and ones with another current copy at once, the
 * only current copy after a write-back to the host. Their memory is reused after their last users
 * (slab pool fences). When nothing is left to drop the allocation fails with RESOURCE_EXHAUSTED.
 */
final class Coherence {

    /** Assumed nanoseconds per byte of a device-to-device copy (placement's transfer cost). */
    static final double DIRECT_NANOS_PER_BYTE = 0.1;
    /** Assumed nanoseconds per byte of a copy through host memory (two copies). */
    static final double STAGED_NANOS_PER_BYTE = 0.5;

    private final boolean fastPathAllowed;
    private final long fastPathMaxBytes;
    // An instance is used under the submit lock only: the scheduler's reusable one for each submission
    // (begin .. end), a standalone one for a new buffer's first replica.
    /** The submitting session (set per submission on the reusable instance). */
    @GuardedBy("SchedulerContext.submitLock")
    private Session session;
    @GuardedBy("SchedulerContext.submitLock")
    private Priority priority;
    @GuardedBy("SchedulerContext.submitLock")
    private final List<Replica> pinned = new ArrayList<>(4);
    /** Transfer commands created; the caller releases them after the submit lock ({@link #release()}). */
    @GuardedBy("SchedulerContext.submitLock")
    private List<Command> created;

    Coherence(Session session, Priority priority, boolean fastPathAllowed, long fastPathMaxBytes) {
        this.session = session;
        this.priority = priority;
        this.fastPathAllowed = fastPathAllowed;
        this.fastPathMaxBytes = fastPathMaxBytes;
    }

    /** An instance for one piece of work of {@code s} outside a submission (a new buffer's first replica). */
    static Coherence standalone(SchedulerConfig config, Session s) {
        return new Coherence(s, s.priority(), config.fastPathNanos() > 0, SchedulerConfig.FAST_PATH_MAX_BYTES);
    }

    /** The reusable instance of a scheduler's submissions (see {@link #begin}). */
    static Coherence reusable(SchedulerConfig config) {
        return new Coherence(null, Priority.NORMAL, config.fastPathNanos() > 0, SchedulerConfig.FAST_PATH_MAX_BYTES);
    }

    /** The replicas one command uses (never evicted for it), emptied for the next command. */
    List<Replica> pinnedForNextCommand() {
        pinned.clear();
        return pinned;
    }

    /**
     * The scheduler's one reusable instance (no allocation per submission), for a submission by {@code s},
     * until {@link #end()}.
     */
    @GuardedBy("SchedulerContext.submitLock")
    Coherence begin(Session s) {
        session = s;
        priority = s.priority();
        created = null;
        pinned.clear();
        return this;
    }

    /** Ends a submission begun with {@link #begin}: the transfers created, for the caller to release after the lock. */
    List<Command> end() {
        List<Command> out = created;
        created = null;
        session = null;
        pinned.clear();
        return out;
    }

    // ------------------------------------------------------------ replicas

    /**
     * Makes sure {@code b} has memory on {@code d} and, when {@code needData}, current data there (a
     * transfer is queued on {@code stream} if not). {@code pinned} replicas are never evicted.
     */
    Replica prepare(Buffer b, Stream stream, boolean needData, List<Replica> pinned) {
        DeviceRuntime d = stream.device();
        Replica r = b.replica(d);
        pinned.add(r);
        allocate(r, pinned);
        if (needData && !r.valid()) {
            Leg leg = leg(b, d, 0, b.sizeBytes(), r.data(0, b.sizeBytes()), r);
            Command t = command(stream, leg.op(), b.sizeBytes());
            leg.attach(t);
            ReplicaStates.writeOrder(t, r);
            r.ready(t.event());
            r.bytes(t.event());
            r.state = ReplicaState.SHARED;
            ReplicaStates.normalize(b);
        }
        return r;
    }

    /**
     * The first replica of a new buffer {@code b}, on {@code d}: memory, and a fill with zeros ordered after
     * the fences of reused memory (a block of the slab pool may have held another session's data). It is
     * the only current copy; a HOSTED_CHANGED_ON_DEVICES buffer also gets a zero host copy.
     */
    void initZeroed(Buffer b, DeviceRuntime d) {
        Replica r = b.replica(d);
        allocate(r, new ArrayList<>(List.of(r)));
        long pad = b.padPattern();
        DeviceCommand first = pad == 0 ? new DeviceCommand.Fill(r.data(0, b.sizeBytes()), 0, 1)
                : Pieces.padded(r.data(0, b.sizeBytes()), b.layout(), b.dtype().byteSize(), pad);
        Command c = command(session.defaultStream(d), first, b.sizeBytes());
        ReplicaStates.writeOrder(c, r); // fences of reused memory
        r.ready(c.event());
        r.bytes(c.event());
        r.state = ReplicaState.MODIFIED;
        if (b.memoryMode() == MemoryMode.HOSTED_CHANGED_ON_DEVICES) {
            ReplicaMemory.zeroHost(b);
            ReplicaStates.normalize(b);
        }
    }

    /** Memory-mode duties after {@code template} wrote replica {@code r} of {@code b} (the write is recorded). */
    void afterWrite(Buffer b, Replica r, CommandTemplate template) {
        switch (b.memoryMode()) {
            case HOSTED_CONSTANT -> {
                if (!r.mapped) {
                    refreshHost(r); // kept on the host: replicas come and go without write-back
                }
            }
            case HOSTED_VOLATILE -> {
                if (b.hostMemory() == null && template instanceof CommandTemplate.Upload u && u.offset() == 0
                        && u.data().byteSize() == b.sizeBytes()) {
                    ReplicaMemory.replaceHost(b, u.data());
                    ReplicaStates.normalize(b);
                }
            }
            default -> {
            }
        }
    }

    /** Gives {@code r} device memory if it has none, evicting others when the budget is full. */
    void allocate(Replica r, List<Replica> pinned) {
        DeviceRuntime d = r.device;
        if (r.mem != null) {
            d.resident.get(r); // touch: most recently used
            return;
        }
        List<Event> fences = new ArrayList<>();
        long bytes = r.buffer.sizeBytes();
        if (bytes > d.pool().budgetBytes()) {
            throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, "device " + d.id() + ": cannot allocate " + bytes
                    + " bytes for " + r.buffer + ": more than its whole budget of " + d.pool().budgetBytes() + " bytes");
        }
        while (true) {
            try {
                r.mem = d.pool().allocate(bytes, fences);
                break;
            } catch (ArraydException e) {
                if (e.code() != ErrorCode.RESOURCE_EXHAUSTED || !evictOne(d, pinned)) {
                    throw e;
                }
            }
        }
        for (Event f : fences) {
            r.addReader(f); // the first writer of this memory waits for the evicted data's last users
        }
        r.ready(Event.SUCCEEDED);
        r.bytes(null); // none of the buffer's data yet (a transfer or a whole write puts it there)
        r.state = ReplicaState.INVALID;
        d.resident.put(r, Boolean.TRUE);
    }

    /** Drops the least recently used replica on {@code d} that is not pinned; false when there is none. */
    private boolean evictOne(DeviceRuntime d, List<Replica> pinned) {
        noteUsesOffTheList(d);
        Replica victim = null;
        for (Replica r : d.resident.keySet()) {
            if (!pinned.contains(r)) {
                victim = r;
                break;
            }
        }
        if (victim == null) {
            return false;
        }
        if (victim.valid() && victim.buffer.validCount() == 1) {
            refreshHost(victim); // write back the only current copy
        }
        ReplicaMemory.drop(victim);
        ReplicaStates.normalize(victim.buffer);
        victim.device.evictions++;
        return true;
    }

    /**
     * Moves the replicas that session-local submissions used since the last eviction (they may not reorder the
     * shared list: {@link Replica#usedLocally}) to the most recently used end, in list order.
     */
    private static void noteUsesOffTheList(DeviceRuntime d) {
        List<Replica> used = null;
        for (Replica r : d.resident.keySet()) {
            if (r.usedLocally) {
                if (used == null) {
                    used = new ArrayList<>();
                }
                used.add(r);
            }
        }
        if (used != null) {
            for (Replica r : used) {
                r.usedLocally = false;
                d.resident.get(r); // touch: most recently used
            }
        }
    }

    /**
     * Copies the current data of device replica {@code src} into a new host copy (the old one is freed
     * after its readers): a download on {@code src}'s device, in the submitting session's default stream
     * there. Afterwards both are SHARED.
     */
    void refreshHost(Replica src) {
        Buffer b = src.buffer;
        Replica host = b.host;
        if (b.hostMemory() != null) {
            // the host memory the buffer lives in: written in place, after its readers
            Command t = command(session.defaultStream(src.device), new DeviceCommand.Download(src.data(0, b.sizeBytes()),
                    host.host), b.sizeBytes());
            t.dependOnInput(src.ready());
            host.orderWrite(t);
            src.addReader(t.event());
            host.ready(t.event());
            ReplicaStates.hostMemoryFilled(b, src, t.event());
            host.state = ReplicaState.SHARED;
            ReplicaStates.normalize(b);
            return;
        }
        ReplicaMemory.dropHost(host);
        Arena arena = Arena.ofShared();
        MemorySegment seg = arena.allocate(Math.max(1, b.sizeBytes()), 64).asSlice(0, b.sizeBytes());
        Stream st = session.defaultStream(src.device);
        Command t = command(st, new DeviceCommand.Download(src.data(0, b.sizeBytes()), seg), b.sizeBytes());
        t.dependOnInput(src.ready());
        src.addReader(t.event());
        host.arena = arena;
        host.host = seg;
        host.ready(t.event());
        host.state = ReplicaState.SHARED;
        ReplicaStates.normalize(b);
    }

    // ------------------------------------------------------------ transfer legs

    /**
     * How bytes {@code [offset, offset + size)} of {@code b}'s current data get into {@code target} on
     * {@code d}: the op that the consuming command runs on {@code d}, what it must wait for, and whose
     * reader it becomes. A staged transfer also queues its first leg (a download on the source device).
     *
     * @param into the replica being filled (excluded as a source), or null
     */
    Leg leg(Buffer b, DeviceRuntime d, long offset, long size, MemRef target, Replica into) {
        Replica src = cheapestSource(b, d, into);
        if (src == null) {
            throw new ArraydException(ErrorCode.INTERNAL, b + ": no current copy to read from");
        }
        if (src.isHost()) {
            return new Leg(new DeviceCommand.Upload(src.host.asSlice(offset, size), target), src.ready(), src, null);
        }
        if (src.device == d) {
            return new Leg(new DeviceCommand.Copy(src.data(offset, size), target), src.ready(), src, null);
        }
        if (d.device().canCopyFrom(src.device.device())) {
            return new Leg(new DeviceCommand.PeerCopy(src.device.device(), src.data(offset, size), target), src.ready(),
                    src, null);
        }
        if (b.memoryMode().hosted()) {
            refreshHost(src); // through the host copy, which stays for later readers
            Replica host = b.host;
            return new Leg(new DeviceCommand.Upload(host.host.asSlice(offset, size), target), host.ready(), host, null);
        }
        Arena arena = Arena.ofShared();
        MemorySegment stage = arena.allocate(Math.max(1, size), 64).asSlice(0, size);
        Command first = command(session.defaultStream(src.device),
                new DeviceCommand.Download(src.data(offset, size), stage), size);
        first.dependOnInput(src.ready());
        src.addReader(first.event());
        return new Leg(new DeviceCommand.Upload(stage, target), first.event(), null, arena);
    }

    /**
     * The current copy that is cheapest to move to {@code d}: one already there, else a direct
     * device-to-device copy, else the host copy, else staging through the host; among equals, one
     * whose data is already complete.
     */
    static Replica cheapestSource(Buffer b, DeviceRuntime d, Replica exclude) {
        Replica best = null;
        double bestCost = Double.MAX_VALUE;
        for (Replica r : b.replicas) {
            if (r == null || r == exclude || !r.valid()) {
                continue;
            }
            double cost = r.device == d ? 0 : d.device().canCopyFrom(r.device.device()) ? 1 : 3;
            cost += r.ready().isDone() ? 0 : 0.5;
            if (cost < bestCost) {
                best = r;
                bestCost = cost;
            }
        }
        Replica host = b.host;
        if (host != exclude && host.valid()) {
            double cost = 2 + (host.ready().isDone() ? 0 : 0.5);
            if (cost < bestCost) {
                best = host;
            }
        }
        return best;
    }

    /** Estimated nanoseconds to make {@code b} current on {@code d} (0 when it is); placement's transfer cost. */
    static double transferNanos(Buffer b, DeviceRuntime d) {
        Replica here = b.replicaOrNull(d);
        if (here != null && here.valid()) {
            return 0;
        }
        double best = Double.MAX_VALUE;
        for (Replica r : b.replicas) {
            if (r != null && r.valid() && d.device().canCopyFrom(r.device.device())) {
                double measured = d.device().copyNanosPerByte(r.device.device());
                best = Math.min(best, Double.isNaN(measured) ? DIRECT_NANOS_PER_BYTE : measured);
            }
        }
        if (best != Double.MAX_VALUE) {
            return b.sizeBytes() * best;
        }
        double link = d.device().hostTransferNanosPerByte();
        return b.sizeBytes() * (Double.isNaN(link) ? STAGED_NANOS_PER_BYTE : STAGED_NANOS_PER_BYTE + link);
    }

    /** An internal command (a transfer) on {@code stream}, in stream order; released by the caller later. */
    Command command(Stream stream, DeviceCommand op, long bytes) {
        Command c = new Command(0, session, stream, op, null, null,
                fastPathAllowed && bytes <= fastPathMaxBytes ? Command.INLINE_SHORT : Command.INLINE_NEVER, bytes, priority,
                CommandSpec.NO_DEADLINE);
        c.dependOnOrder(stream.tail);
        stream.tail = c;
        if (created == null) {
            created = new ArrayList<>(2);
        }
        created.add(c);
        return c;
    }

    /** Starts the transfer commands created (after the submit lock: their dependencies are all known). */
    void release() {
        if (created != null) {
            for (Command c : created) {
                c.release();
            }
        }
    }

    /**
     * The last leg of a transfer: {@code op} runs on the target device as (part of) the consuming command.
     *
     * @param after  what the op must wait for (an input, see {@link Command#dependOnInput}): the source's last writer,
     *               or the staged first leg
     * @param source the replica the op reads (it becomes one of its readers), or null for a staging buffer
     * @param stage  the staging memory to free when the op is done, or null
     */
    record Leg(DeviceCommand op, Event after, Replica source, Arena stage) {

        /** Wires the leg into the command {@code c} that runs its op. */
        void attach(Command c) {
            c.dependOnInput(after);
            if (source != null) {
                source.addReader(c.event());
            }
            if (stage != null) {
                c.event().onDone(e -> stage.close());
            }
        }
    }
}
