package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.support.GuardedBy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The dependency tracker: takes validated commands and, under the submit lock, registers their events,
 * places launches that name no device, makes their buffers' replicas current on their devices (transfers
 * inserted by {@link Coherence}), and adds their edges — explicit waits and read-after-write (these pass
 * failure on), write-after-read, write-after-write and stream order (these only order). After the lock
 * the commands are released: each starts when its dependencies are done.
 *
 * <p>A batch is accepted whole or rejected whole: everything that can fail is checked first
 * ({@link #checkBatch}); a command that still fails while tracked (nothing left to evict, a merge buffer
 * that does not fit) fails alone, in order, without touching its buffers.
 */
final class Submission {

    /** Exact-size arrays for the replicas and memory of commands with fewer buffers than this. */
    private static final int SCRATCH = 8;
    private static final Command[] NO_COMMANDS = new Command[0];

    private final SchedulerContext ctx;
    private final CommandValidator validator;
    private final Placement placement;
    private final BufferLifecycle buffers;
    // The reusable Prepared a single-command submission borrows (its buffer arrays and batch of one with it), so
    // that the common submission allocates nothing before its command; null while a submission holds it (a
    // concurrent or nested one then fills one of its own). Validation stays outside the submit lock.
    private final AtomicReference<Prepared> spare = new AtomicReference<>(Prepared.reusable());
    /** The submissions' coherence bookkeeping, reused (see {@link Coherence#begin}). */
    @GuardedBy("SchedulerContext.submitLock")
    private final Coherence coherence;
    /** Event ids of the batch being checked (a set: the values are TRUE); empty between batches. */
    @GuardedBy("SchedulerContext.submitLock")
    private final LongMap<Boolean> batchIds = new LongMap<>(64);
    /** One command's state while it is tracked. */
    @GuardedBy("SchedulerContext.submitLock")
    private final Tracking tracking = new Tracking();

    Submission(SchedulerContext ctx, CommandValidator validator, Placement placement, BufferLifecycle buffers) {
        this.ctx = ctx;
        this.validator = validator;
        this.placement = placement;
        this.buffers = buffers;
        this.coherence = Coherence.reusable(ctx.config());
    }

    /** See {@link Scheduler#submit}. */
    List<Event> submit(Session s, List<CommandSpec> batch, EventListener listener) {
        ctx.checkSession(s);
        if (batch.size() == 1 && !(batch.getFirst().op() instanceof CommandSpec.CopyOp c && c.merge() != MergeMode.NONE)) {
            return submitOne(s, batch.getFirst(), listener);
        }
        Prepared[] prepared = new Prepared[batch.size()];
        Map<Stream, DType> merges = null; // what earlier merge copies of the batch put in their streams' merge buffers
        for (int i = 0; i < prepared.length; i++) { // indexed: no iterator per submission
            if (batch.get(i).op() instanceof CommandSpec.CopyOp copy && copy.merge() != MergeMode.NONE) {
                merges = new HashMap<>(4);
                break;
            }
        }
        Prepared.Scratch scratch = Prepared.batchScratch(); // one for the batch: its commands are validated in turn
        for (int i = 0; i < prepared.length; i++) {
            try {
                prepared[i] = validator.prepare(s, batch.get(i), merges, Prepared.once(scratch));
            } catch (ArraydException e) {
                throw new ArraydException(e.code(), "commands[" + i + "]: " + e.getMessage(), e);
            }
        }
        return enqueue(s, prepared, Replay.NONE, listener);
    }

    /** {@link #submit} of one command that is not a merge copy (no merge buffers to follow through the batch). */
    private List<Event> submitOne(Session s, CommandSpec spec, EventListener listener) {
        Prepared p = spare.getAndSet(null);
        if (p == null) {
            p = Prepared.reusable();
        }
        try {
            try {
                validator.prepare(s, spec, null, p);
            } catch (ArraydException e) {
                throw new ArraydException(e.code(), "commands[0]: " + e.getMessage(), e);
            }
            return enqueue(s, p.alone(), Replay.NONE, listener);
        } finally {
            p.clear();
            spare.set(p);
        }
    }

    /** Registers, orders and starts validated commands (a batch, or a graph replay); their events in order. */
    List<Event> enqueue(Session s, Prepared[] prepared, Replay replay, EventListener listener) {
        // one command (the common submission) needs no arrays: its event is the list, and it has no earlier commands
        Command[] commands = prepared.length == 1 ? NO_COMMANDS : new Command[prepared.length];
        Command only;
        List<Command> transfers;
        synchronized (ctx.submitLock) {
            Coherence co = coherence.begin(s);
            try {
                only = enqueueLocked(s, prepared, replay, listener, commands, co);
            } finally {
                transfers = co.end();
            }
        }
        if (transfers != null) {
            for (Command t : transfers) {
                t.release();
            }
        }
        if (only != null) {
            only.release();
            return List.of(only.event());
        }
        List<Event> events = new ArrayList<>(commands.length);
        for (Command c : commands) {
            events.add(c.event());
            c.release();
        }
        return events;
    }

    /**
     * Registers and tracks the commands into {@code commands} (empty for a single command, which is
     * returned instead; null is returned otherwise).
     */
    @GuardedBy("SchedulerContext.submitLock")
    private Command enqueueLocked(Session s, Prepared[] prepared, Replay replay, EventListener listener,
            Command[] commands, Coherence co) {
        assert ctx.holdsSubmitLock();
        ctx.checkAccepting(s);
        // First pass: everything that can fail, before anything changes.
        LongMap<Boolean> inBatch = prepared.length > 1 ? batchIds : null; // emptied again below
        try {
            checkBatch(s, prepared, replay, inBatch);
        } finally {
            if (inBatch != null) {
                for (int i = 0; i < prepared.length; i++) {
                    inBatch.remove(replay.id(prepared[i], i));
                }
            }
        }
        // Second pass: register, make replicas current, order, track.
        Command only = null;
        List<Buffer> locals = null;
        for (int i = 0; i < prepared.length; i++) {
            Prepared p = prepared[i];
            long id = replay.id(p, i) != 0 ? replay.id(p, i) : s.events.assign();
            Event e = new Event(id);
            s.events.register(e);
            Buffer[] used = replay.buffers(p);
            Command c = track(s, p, i, replay, used, e, co, commands);
            if (commands.length == 0) {
                only = c;
            } else {
                commands[i] = c;
            }
            if (listener != null) {
                e.onDone(listener);
            }
            for (Buffer b : used) {
                if (b != null && b.memoryMode() == MemoryMode.LOCAL && !b.destroyed) {
                    if (locals == null) {
                        locals = new ArrayList<>();
                    }
                    if (!locals.contains(b)) {
                        locals.add(b);
                    }
                }
            }
        }
        if (locals != null) {
            // scratch for this graph: the handle goes now, the memory after this batch's last use
            for (Buffer b : locals) {
                if (s.buffers.remove(b.handle(), b)) {
                    b.holders.decrementAndGet();
                    s.bufferConsumed(b.handle());
                }
                buffers.release(b);
            }
        }
        return only;
    }

    /** The first pass of a submission: everything that can fail, before anything changes. */
    @GuardedBy("SchedulerContext.submitLock")
    private void checkBatch(Session s, Prepared[] prepared, Replay replay, LongMap<Boolean> inBatch) {
        Set<Buffer> constantsRead = null; // HOSTED_CONSTANT buffers read by an earlier command of the batch
        for (int i = 0; i < prepared.length; i++) {
            Prepared p = prepared[i];
            try {
                long id = replay.id(p, i);
                if (id != 0) {
                    s.events.checkUnused(id);
                    if (inBatch != null && inBatch.put(id, Boolean.TRUE) != null) {
                        throw new ArraydException(ErrorCode.ALREADY_EXISTS, "event: " + id + " (used twice in this batch)");
                    }
                }
                long[] waits = replay.waits(p);
                for (int w = 0; w < waits.length; w++) {
                    boolean earlierInBatch = inBatch != null && inBatch.containsKey(waits[w]) && waits[w] != id;
                    if (!earlierInBatch && s.events.lookup(waits[w]) == null) {
                        throw ArraydException.notFound("wait_events[" + w + "]: event " + waits[w]
                                + " (not found in this session)");
                    }
                }
                constantsRead = checkBuffers(p, replay.buffers(p), constantsRead);
                if (p.stream().destroyed) {
                    throw ArraydException.notFound(p.stream() + " (destroyed)");
                }
                if (p.kernel() != null && p.kernel().destroyed) {
                    throw ArraydException.notFound("kernel " + p.kernel().name() + " (destroyed)");
                }
            } catch (ArraydException e) {
                throw new ArraydException(e.code(), "commands[" + i + "]: " + e.getMessage(), e);
            }
        }
    }

    /**
     * A command's buffers still exist, and a HOSTED_CONSTANT one is not written after its first read (by
     * this batch or before); returns the HOSTED_CONSTANT buffers read so far.
     */
    private static Set<Buffer> checkBuffers(Prepared p, Buffer[] used, Set<Buffer> constantsRead) {
        for (int b = 0; b < used.length; b++) {
            Buffer buf = used[b];
            if (buf == null) {
                continue;
            }
            if (buf.destroyed) {
                throw ArraydException.notFound(buf + " (destroyed"
                        + (buf.memoryMode() == MemoryMode.LOCAL ? ": LOCAL buffers last one graph)" : ")"));
            }
            if (p.writes()[b] && buf.memoryMode() == MemoryMode.HOSTED_CONSTANT
                    && (buf.frozen || (constantsRead != null && constantsRead.contains(buf)))) {
                throw new ArraydException(ErrorCode.FAILED_PRECONDITION, buf + " is HOSTED_CONSTANT and"
                        + " was read already (expected: written before its first read, read-only from then on)");
            }
        }
        for (int b = 0; b < used.length; b++) {
            Buffer buf = used[b];
            if (buf != null && p.reads()[b] && buf.memoryMode() == MemoryMode.HOSTED_CONSTANT) {
                if (constantsRead == null) {
                    constantsRead = new HashSet<>();
                }
                constantsRead.add(buf);
            }
        }
        return constantsRead;
    }

    /**
     * One command's state while it is tracked, reused for every command (under the submit lock): where it
     * runs, the buffers it touches and how, their replicas and memory there, and its device op.
     */
    private static final class Tracking {
        private final Replica[][] repsScratch = new Replica[SCRATCH][];
        private final MemRef[][] refsScratch = new MemRef[SCRATCH][];
        Stream stream;
        CommandTemplate template;
        Buffer[] buffers;
        /** The Prepared's own array (a graph's, perhaps): copied before anything in it changes. */
        Buffer[] shared;
        boolean[] reads;
        boolean[] writes;
        boolean[] whole;
        Replica[] reps;
        MemRef[] refs;
        Coherence.Leg leg;
        /** What a merge copy puts in the stream's merge buffer, installed once it is tracked. */
        Buffer newMerge;
        boolean newMergeInPlace;
        DeviceCommand op;
        Object result;

        Tracking() {
            for (int n = 0; n < SCRATCH; n++) {
                repsScratch[n] = new Replica[n];
                refsScratch[n] = new MemRef[n];
            }
        }

        void begin(Prepared p, CommandTemplate template, Buffer[] buffers) {
            this.stream = p.stream();
            this.template = template;
            this.buffers = buffers;
            this.shared = buffers;
            this.reads = p.reads();
            this.writes = p.writes();
            this.whole = p.whole();
        }

        /** Buffers it may change: a private copy of the array. */
        Buffer[] ownBuffers() {
            if (buffers == shared) {
                buffers = buffers.clone();
            }
            return buffers;
        }

        /** Exact-size arrays for the replicas and memory of its buffers (entries are stale: all overwritten). */
        void sizeArrays() {
            int n = buffers.length;
            reps = n < SCRATCH ? repsScratch[n] : new Replica[n];
            refs = n < SCRATCH ? refsScratch[n] : new MemRef[n];
        }

        /** Forgets the command (entries of the scratch arrays only keep replicas alive, which their buffers do anyway). */
        void clear() {
            stream = null;
            template = null;
            buffers = shared = null;
            reps = null;
            refs = null;
            leg = null;
            newMerge = null;
            newMergeInPlace = false;
            op = null;
            result = null;
        }
    }

    /** Builds one command, its transfers and its edges. */
    @GuardedBy("SchedulerContext.submitLock")
    private Command track(Session s, Prepared p, int index, Replay replay, Buffer[] used, Event e, Coherence co,
            Command[] earlier) {
        Tracking t = tracking;
        t.begin(p, replay.template(p, index), used);
        try {
            try {
                place(s, p, t);
                instances(s, p, t, co);
                if (t.template instanceof CommandTemplate.MergeCopy mc) {
                    mergeCopy(t, mc);
                }
                mergeArguments(p, t);
                replicas(t, co);
                buildOp(p, t);
            } catch (ArraydException ex) {
                // RESOURCE_EXHAUSTED (nothing left to evict) or FAILED_PRECONDITION (a merge buffer that does not
                // fit) in practice; whatever it is, only this command fails: the batch is half registered already
                return refused(s, p, replay, e, earlier, t, ex);
            }
            Command c = newCommand(s, p, replay, e, t);
            order(c, s, p, replay, earlier, t.stream);
            if (t.leg != null) {
                t.leg.attach(c);
            }
            for (int b = 0; b < t.buffers.length; b++) {
                Buffer buf = t.buffers[b];
                if (t.reads[b] && buf.memoryMode() == MemoryMode.HOSTED_CONSTANT) {
                    buf.frozen = true; // read once: read-only from now on
                }
                if (t.reps[b] != null) {
                    Coherence.access(c, t.reps[b], t.reads[b], t.writes[b]);
                    if (t.writes[b]) {
                        co.afterWrite(buf, t.reps[b], t.template);
                    }
                }
            }
            installMerge(t);
            return c;
        } finally {
            t.clear();
        }
    }

    /** A launch to be placed goes to the device where it is expected to finish first (its template follows). */
    private void place(Session s, Prepared p, Tracking t) {
        if (p.placeAmong() == null) {
            return;
        }
        CommandTemplate.Launch l = (CommandTemplate.Launch) t.template;
        DeviceRuntime placed = placement.place(p.kernel(), t.buffers, p.size(), p.placeAmong(), l.globalDims(),
                l.localDims());
        if (placed != t.stream.device()) {
            t.stream = s.defaultStream(placed);
            t.template = l.on(p.kernel().forBackend(placed.backend()));
        }
    }

    /** A PER_STREAM buffer is its stream's instance; a copy may read another stream's (its src_stream). */
    private void instances(Session s, Prepared p, Tracking t, Coherence co) {
        boolean perStream = false;
        for (Buffer b : t.buffers) {
            perStream |= b != null && b.perStream;
        }
        if (!perStream) {
            return;
        }
        Buffer[] own = t.ownBuffers();
        long srcStream = p.spec().op() instanceof CommandSpec.CopyOp cp ? cp.srcStream() : 0;
        for (int b = 0; b < own.length; b++) {
            if (own[b] != null && own[b].perStream) {
                Stream of = b == 0 && srcStream != 0 ? s.stream(srcStream, "copy.src_stream") : t.stream;
                own[b] = buffers.instanceOf(s, own[b], of, co);
            }
        }
    }

    /**
     * A merge copy becomes a copy of its source into the stream's merge buffer (reused when it fits), or — a
     * streaming merge whose source is current on the stream's device — a no-op that lets the consumer read
     * the source in place.
     */
    private void mergeCopy(Tracking t, CommandTemplate.MergeCopy mc) {
        Buffer src = t.buffers[0];
        Stream st = t.stream;
        Replica here = src.replicas[st.device().index()];
        if (mc.mode() == MergeMode.STREAMING && here != null && here.valid()) {
            t.newMerge = src;
            t.newMergeInPlace = true;
            t.template = new CommandTemplate.Prefetch();
            return;
        }
        Buffer merge = st.merge;
        if (merge == null || st.mergeInPlace || merge.dtype() != src.dtype() || merge.sizeBytes() != src.sizeBytes()) {
            merge = buffers.newMerge(src, st);
        }
        t.newMerge = merge;
        t.buffers = new Buffer[] {src, merge};
        t.template = new CommandTemplate.Copy(0, 0, src.sizeBytes());
        // it reads the source and writes all of the merge buffer
        t.reads = new boolean[] {true, false};
        t.writes = new boolean[] {false, true};
        t.whole = new boolean[] {false, true};
    }

    /** A launch's null buffer entries stand for its stream's merge buffer, which must hold what it expects. */
    private static void mergeArguments(Prepared p, Tracking t) {
        for (int b = 0; b < t.buffers.length; b++) {
            if (t.buffers[b] == null) {
                Stream st = t.stream;
                Buffer merge = st.merge;
                if (merge == null || merge.dtype() != p.mergeDtype() || merge.destroyed) {
                    throw new ArraydException(ErrorCode.FAILED_PRECONDITION, "launch: the merge buffer of " + st
                            + (merge == null ? " is empty (expected: a merge copy on this stream first)"
                            : " holds " + merge.dtype().wireName() + " (expected: " + p.mergeDtype().wireName() + ")"));
                }
                t.ownBuffers()[b] = merge;
            }
        }
    }

    /**
     * Each buffer's replica on the command's device, with memory, and current when the command reads it
     * (or writes part of it). A copy from a buffer not current on the device reads it where it is current,
     * straight into the destination (a transfer leg) instead.
     */
    private static void replicas(Tracking t, Coherence co) {
        t.sizeArrays();
        DeviceRuntime d = t.stream.device();
        List<Replica> pinned = co.pinnedForNextCommand();
        Buffer[] bs = t.buffers;
        boolean remoteCopy = t.template instanceof CommandTemplate.Copy && bs.length == 2 && !validOn(bs[0], d);
        for (int b = 0; b < bs.length; b++) {
            if (remoteCopy && b == 0) {
                t.reps[b] = null;
                t.refs[b] = null;
                continue;
            }
            boolean needData = t.reads[b] || (t.writes[b] && !t.whole[b]);
            t.reps[b] = co.prepare(bs[b], t.stream, needData, pinned);
            t.refs[b] = t.reps[b].data(0, bs[b].sizeBytes());
        }
        if (remoteCopy) {
            CommandTemplate.Copy cp = (CommandTemplate.Copy) t.template;
            t.leg = co.leg(bs[0], d, cp.srcOffset(), cp.size(), CommandTemplate.slice(t.refs[1], cp.dstOffset(), cp.size()),
                    null);
        }
    }

    /** The device op, given the memory of the command's buffers (a launch repeated on the same memory reuses its op). */
    private static void buildOp(Prepared p, Tracking t) {
        if (t.leg != null) {
            t.op = t.leg.op();
        } else if (t.template instanceof CommandTemplate.Launch launch) {
            int device = t.stream.device().index();
            DeviceCommand.Launch last = p.kernel().lastLaunch(device);
            DeviceCommand.Launch built = launch.op(t.refs, last);
            if (built != last) {
                p.kernel().lastLaunch(device, built);
            }
            t.op = built;
        } else {
            CommandTemplate.Built built = t.template.build(t.refs);
            t.op = built.op();
            t.result = built.result();
        }
        if (p.kernel() != null) {
            p.kernel().module().retain(); // released when the command ends
        }
    }

    private Command newCommand(Session s, Prepared p, Replay replay, Event e, Tracking t) {
        Priority priority = p.spec().priority() != null ? p.spec().priority() : s.priority();
        Command c = new Command(e, s, t.stream, t.op, t.result, p.kernel(), t.op != null && fastPath(p), p.size(), priority,
                replay.deadlineNanos(p));
        if (p.kernel() != null && ctx.deviceCount() > 1) {
            DeviceRuntime d = t.stream.device();
            double est = placement.estimateNanos(p.kernel(), d, p.size());
            if (est > 0) {
                c.expectedNanos = (long) est;
                d.backlogAdded(c.expectedNanos);
            }
        }
        return c;
    }

    /** Its explicit waits and the earlier commands of its batch it waits on (both pass failure on), and stream order. */
    private static void order(Command c, Session s, Prepared p, Replay replay, Command[] earlier, Stream st) {
        for (long w : replay.waits(p)) {
            c.dependOnData(s.events.lookup(w));
        }
        for (int i : p.after()) {
            c.dependOnData(earlier[i].event());
        }
        c.dependOnOrder(st.tail);
        st.tail = c.event();
    }

    /** A merge copy's result becomes its stream's merge buffer. */
    private void installMerge(Tracking t) {
        Stream st = t.stream;
        if (t.newMerge != null && t.newMerge != st.merge) {
            buffers.dropMerge(st);
            st.merge = t.newMerge;
        }
        if (t.newMerge != null) {
            st.mergeInPlace = t.newMergeInPlace;
        }
    }

    /** Refused while tracked: the command fails, after its stream predecessor and its waits, without touching its buffers. */
    private Command refused(Session s, Prepared p, Replay replay, Event e, Command[] earlier, Tracking t,
            ArraydException refusal) {
        Stream st = t.stream;
        if (p.template() instanceof CommandTemplate.MergeCopy) {
            if (t.newMerge != null && t.newMerge != st.merge && !t.newMergeInPlace) {
                buffers.release(t.newMerge); // a merge buffer that was never installed
            }
            // the stream's merge buffer no longer holds what its launches expect: empty it, so that they fail
            buffers.dropMerge(st);
        }
        Command c = new Command(e, s, st, null, null, null, false, 0,
                p.spec().priority() != null ? p.spec().priority() : s.priority(), CommandSpec.NO_DEADLINE);
        order(c, s, p, replay, earlier, st);
        c.cancel(refusal);
        return c;
    }

    private static boolean validOn(Buffer b, DeviceRuntime d) {
        Replica r = b.replicas[d.index()];
        return r != null && r.valid();
    }

    /** Whether a command is expected to be short enough for the fast path (see SchedulerConfig). */
    private boolean fastPath(Prepared p) {
        long bound = ctx.config().fastPathNanos();
        if (bound == 0) {
            return false;
        }
        if (p.kernel() != null) {
            return p.kernel().cost().estimateNanos(p.size()) <= bound;
        }
        return p.size() <= SchedulerConfig.FAST_PATH_MAX_BYTES;
    }
}
