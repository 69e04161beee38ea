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
    /** The scratch of submissions under the submit lock's write side (a session has its own for the read side). */
    @GuardedBy("SchedulerContext.submitLock")
    private final SubmitScratch scratch = new SubmitScratch();

    Submission(SchedulerContext ctx, CommandValidator validator, Placement placement, BufferLifecycle buffers) {
        this.ctx = ctx;
        this.validator = validator;
        this.placement = placement;
        this.buffers = buffers;
        this.coherence = Coherence.reusable(ctx.config());
    }

    /** See {@link Scheduler#submit(Session, List, EventListener)}. */
    List<Event> submit(Session s, List<CommandSpec> batch, EventListener listener) {
        ctx.checkSession(s);
        if (batch.size() == 1 && !isMerge(batch.getFirst())) {
            return List.of(submitOne(s, batch.getFirst(), listener));
        }
        Prepared[] prepared = new Prepared[batch.size()];
        Map<Stream, DType> merges = null; // what earlier merge copies of the batch put in their streams' merge buffers
        for (int i = 0; i < prepared.length; i++) { // indexed: no iterator per submission
            if (isMerge(batch.get(i))) {
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

    /** See {@link Scheduler#submit(Session, CommandSpec, EventListener)}. */
    Event submit(Session s, CommandSpec command, EventListener listener) {
        ctx.checkSession(s);
        return isMerge(command) ? submit(s, List.of(command), listener).getFirst() : submitOne(s, command, listener);
    }

    private static boolean isMerge(CommandSpec command) {
        return command.op() instanceof CommandSpec.CopyOp c && c.merge() != MergeMode.NONE;
    }

    /**
     * {@link #submit} of one command that is not a merge copy (no merge buffers to follow through the batch). The
     * session claimed for its session-local submissions ({@link Session#tryEnterLocal}) lends its own
     * {@code Prepared}; else the scheduler's spare one is borrowed.
     */
    private Event submitOne(Session s, CommandSpec spec, EventListener listener) {
        boolean claimed = s.tryEnterLocal();
        Prepared p;
        if (claimed) {
            p = s.localPrepared;
        } else {
            p = spare.getAndSet(null);
            if (p == null) {
                p = Prepared.reusable();
            }
        }
        Command only;
        try {
            try {
                validator.prepare(s, spec, null, p);
            } catch (ArraydException e) {
                throw new ArraydException(e.code(), "commands[0]: " + e.getMessage(), e);
            }
            only = register(s, p.alone(), Replay.NONE, listener, NO_COMMANDS, claimed);
        } finally {
            p.clear();
            if (claimed) {
                s.exitLocal(); // before the command starts: it may run here, inline
            } else {
                spare.setRelease(p); // (the next getAndSet acquires it; a volatile write would cost a fence)
            }
        }
        only.release();
        return only.event();
    }

    /** Registers, orders and starts validated commands (a batch, or a graph replay); their events in order. */
    List<Event> enqueue(Session s, Prepared[] prepared, Replay replay, EventListener listener) {
        // one command (the common submission) needs no arrays: its event is the list, and it has no earlier commands
        Command[] commands = prepared.length == 1 ? NO_COMMANDS : new Command[prepared.length];
        Command only = register(s, prepared, replay, listener, commands, false);
        if (only != null) {
            only.release();
            return List.of(only.event());
        }
        List<Event> events = new ArrayList<>(commands.length);
        for (Command c : commands) {
            events.add(c.event());
        }
        // trampolined: the batch's ready short launches are queued as they are released and run once all are,
        // so that one of them runs here and the others of worth go to their lanes to run beside it
        Trampoline.run(() -> {
            for (Command c : commands) {
                c.release();
            }
        });
        return events;
    }

    /**
     * Registers and orders the commands under the submit lock and releases the transfers coherence added: the
     * one command when {@code commands} is empty (returned, not yet released), else null with {@code commands}
     * filled (none released yet). Commands that touch only the session's own state ({@link SessionLocal}) are
     * registered under the lock's read side (one at a time per session: {@link Session#tryEnterLocal}, which the
     * caller may hold already: {@code claimed}), beside other sessions' submissions.
     */
    private Command register(Session s, Prepared[] prepared, Replay replay, EventListener listener, Command[] commands,
            boolean claimed) {
        if (replay == Replay.NONE && SessionLocal.mayApply(prepared) && !ctx.holdsSubmitLock()
                && (claimed || s.tryEnterLocal())) {
            try {
                long stamp = ctx.lockShared();
                try {
                    if (SessionLocal.applies(ctx, s, prepared)) {
                        return enqueueLocked(s, prepared, replay, listener, commands, null, s.localScratch);
                    }
                } finally {
                    ctx.unlockShared(stamp);
                }
            } finally {
                if (!claimed) {
                    s.exitLocal();
                }
            }
        }
        Command only;
        List<Command> transfers;
        ctx.lockSubmit();
        try {
            Coherence co = coherence.begin(s);
            try {
                only = enqueueLocked(s, prepared, replay, listener, commands, co, scratch);
            } finally {
                transfers = co.end();
            }
        } finally {
            ctx.unlockSubmit();
        }
        if (transfers != null) {
            for (Command t : transfers) {
                t.release();
            }
        }
        return only;
    }

    /**
     * Registers and tracks the commands into {@code commands} (empty for a single command, which is
     * returned instead; null is returned otherwise). Under the submit lock with {@code co}, or — commands of
     * the session's own state, {@code co} null — under its read side, the session claimed.
     */
    @GuardedBy("SchedulerContext.submitLock")
    private Command enqueueLocked(Session s, Prepared[] prepared, Replay replay, EventListener listener,
            Command[] commands, Coherence co, SubmitScratch scratch) {
        assert co != null ? ctx.holdsSubmitLock() : ctx.sharedHeld() && s.inLocal();
        if (co != null) {
            ctx.checkAccepting(s);
        } // (else SessionLocal.applies checked it)
        // First pass: everything that can fail, before anything changes.
        LongMap<Boolean> inBatch = prepared.length > 1 ? scratch.batchIds : null; // emptied again below
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
            Buffer[] used = replay.buffers(p);
            Command c = track(s, p, i, replay, used, id, co, scratch, commands);
            Event e = c.event();
            s.events.register(e);
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
        int opened = 0; // new ranges of event ids the batch opens (the range limit counts them before they exist)
        for (int i = 0; i < prepared.length; i++) {
            Prepared p = prepared[i];
            try {
                long id = replay.id(p, i);
                if (id != 0) {
                    boolean nextToBatch = inBatch != null && (inBatch.containsKey(id - 1) || inBatch.containsKey(id + 1));
                    if (s.events.checkUnused(id, opened, nextToBatch)) {
                        opened++;
                    }
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
     * What a merge copy becomes when tracked: a copy of its source into the stream's merge buffer (its
     * buffers, flags and template), or — a streaming merge whose source is current on the stream's device —
     * a no-op that lets the consumer read the source in place ({@code buffers} null: unchanged).
     */
    private record MergeRewrite(Buffer newMerge, boolean inPlace, CommandTemplate template, Buffer[] buffers,
            boolean[] reads, boolean[] writes, boolean[] whole) {}

    /**
     * Builds one command, its transfers and its edges. Its state lives in locals (the hot path writes no
     * shared object); the rare rewrites (placement, per-stream instances, merge copies) return what changes.
     * Without {@code co} (a command of the session's own state, see {@link SessionLocal}) its replicas are
     * current already and nothing is allocated, moved or rewritten.
     */
    @GuardedBy("SchedulerContext.submitLock")
    private Command track(Session s, Prepared p, int index, Replay replay, Buffer[] used, long id, Coherence co,
            SubmitScratch scratch, Command[] earlier) {
        Stream st = p.stream();
        CommandTemplate template = replay.template(p, index);
        Buffer[] bufs = used;
        boolean[] reads = p.reads();
        boolean[] writes = p.writes();
        boolean[] whole = p.whole();
        MergeRewrite merge = null;
        Replica[] reps;
        Coherence.Leg leg;
        DeviceCommand op;
        Object result = null;
        try {
            if (p.placeAmong() != null) {
                CommandTemplate.Launch l = (CommandTemplate.Launch) template;
                DeviceRuntime placed = placement.place(p.kernel(), bufs, p.size(), p.placeAmong(), l.globalDims(),
                        l.localDims());
                if (placed != st.device()) {
                    st = s.defaultStream(placed);
                    template = l.on(p.kernel().forBackend(placed.backend()));
                }
            }
            bufs = instances(s, p, st, bufs, co);
            if (template instanceof CommandTemplate.MergeCopy mc) {
                merge = mergeCopy(st, bufs[0], mc);
                template = merge.template();
                if (merge.buffers() != null) {
                    bufs = merge.buffers();
                    reads = merge.reads();
                    writes = merge.writes();
                    whole = merge.whole();
                }
            }
            bufs = mergeArguments(p, st, bufs);
            int n = bufs.length;
            reps = scratch.replicas(n);
            MemRef[] refs = scratch.refs(n);
            if (co == null) {
                leg = null;
                SessionLocal.replicas(st.device(), bufs, reps, refs);
            } else if (template instanceof CommandTemplate.HostWritten) {
                reps[0] = null; // the host copy is what it writes (Coherence.wroteHost below): no device replica
                leg = null;
            } else {
                leg = replicas(st, template, bufs, reads, writes, whole, reps, refs, co);
            }
            if (leg != null) {
                op = leg.op();
            } else if (template instanceof CommandTemplate.Launch launch) {
                op = launchOp(p, st, launch, refs);
            } else {
                CommandTemplate.Built built = template.build(refs);
                op = built.op();
                result = built.result();
            }
            if (p.kernel() != null) {
                p.kernel().module().retain(); // released when the command ends
            }
        } catch (ArraydException ex) {
            // RESOURCE_EXHAUSTED (nothing left to evict) or FAILED_PRECONDITION (a merge buffer that does not
            // fit) in practice; whatever it is, only this command fails: the batch is half registered already
            return refused(s, p, replay, id, earlier, st, merge, ex);
        }
        // A download into the bytes its buffer lives in writes them: the copy is a transfer of its own, which the
        // command waits for (failure passes on). So the client's waits, deadline or cancel, failing the command,
        // fail no copy of the data: the memory's next readers wait on the transfer, not on the command.
        Command ownBytes = null;
        if (co != null && template instanceof CommandTemplate.Download dl && dl.into() != null
                && bufs[0].livesIn(dl.into())) {
            ownBytes = co.command(st, op, p.size());
            op = null;
        }
        Command c = newCommand(s, p, replay, id, st, op, result);
        order(c, s, p, replay, earlier, st);
        if (leg != null) {
            leg.attach(c);
        }
        if (ownBytes != null) {
            c.dependOnInput(ownBytes.event());
        }
        for (int b = 0; b < bufs.length; b++) {
            Buffer buf = bufs[b];
            if (reads[b] && buf.memoryMode() == MemoryMode.HOSTED_CONSTANT) {
                buf.frozen = true; // read once: read-only from now on
            }
            if (reps[b] != null) {
                if (ownBytes != null) {
                    CommandTemplate.Download dl = (CommandTemplate.Download) template;
                    ReplicaStates.downloadIntoOwnMemory(ownBytes, reps[b], dl.offset(), dl.size(), dl.into());
                } else {
                    if (template instanceof CommandTemplate.Upload up && buf.livesIn(up.data())) {
                        ReplicaStates.uploadFromOwnMemory(c, reps[b]);
                    }
                    ReplicaStates.access(c, reps[b], reads[b], writes[b], whole[b]);
                }
                if (writes[b] && co != null) { // (a DEVICE buffer, without co, has no duties after a write)
                    co.afterWrite(buf, reps[b], template);
                }
            }
        }
        if (template instanceof CommandTemplate.HostWritten) {
            ReplicaStates.wroteHost(c, bufs[0]);
        }
        if (merge != null) {
            installMerge(st, merge);
        }
        return c;
    }

    /** A PER_STREAM buffer is its stream's instance (a copy may read another stream's, its src_stream): a new array then. */
    private Buffer[] instances(Session s, Prepared p, Stream st, Buffer[] bufs, Coherence co) {
        boolean perStream = false;
        for (Buffer b : bufs) {
            perStream |= b != null && b.perStream;
        }
        if (!perStream) {
            return bufs;
        }
        Buffer[] own = bufs.clone();
        long srcStream = p.spec().op() instanceof CommandSpec.CopyOp cp ? cp.srcStream() : 0;
        for (int b = 0; b < own.length; b++) {
            if (own[b] != null && own[b].perStream) {
                Stream of = b == 0 && srcStream != 0 ? s.stream(srcStream, "copy.src_stream") : st;
                own[b] = buffers.instanceOf(s, own[b], of, co);
            }
        }
        return own;
    }

    /** What a merge copy of {@code src} on {@code st} becomes (see {@link MergeRewrite}). */
    private MergeRewrite mergeCopy(Stream st, Buffer src, CommandTemplate.MergeCopy mc) {
        Replica here = src.replicaOrNull(st.device());
        if (mc.mode() == MergeMode.STREAMING && here != null && here.valid()) {
            return new MergeRewrite(src, true, new CommandTemplate.Prefetch(), null, null, null, null);
        }
        Buffer merge = st.merge;
        if (merge == null || st.mergeInPlace || merge.dtype() != src.dtype() || merge.sizeBytes() != src.sizeBytes()) {
            merge = buffers.newMerge(src, st);
        }
        // it reads the source and writes all of the merge buffer
        return new MergeRewrite(merge, false, new CommandTemplate.Copy(0, 0, src.sizeBytes()), new Buffer[] {src, merge},
                new boolean[] {true, false}, new boolean[] {false, true}, new boolean[] {false, true});
    }

    /**
     * A launch's null buffer entries stand for its stream's merge buffer, which must hold what it expects
     * (a new array then: the given one may be a graph's).
     */
    private static Buffer[] mergeArguments(Prepared p, Stream st, Buffer[] bufs) {
        Buffer[] out = bufs;
        for (int b = 0; b < bufs.length; b++) {
            if (bufs[b] == null) {
                Buffer merge = st.merge;
                if (merge == null || merge.dtype() != p.mergeDtype() || merge.destroyed) {
                    throw new ArraydException(ErrorCode.FAILED_PRECONDITION, "launch: the merge buffer of " + st
                            + (merge == null ? " is empty (expected: a merge copy on this stream first)"
                            : " holds " + merge.dtype().wireName() + " (expected: " + p.mergeDtype().wireName() + ")"));
                }
                if (out == bufs) {
                    out = bufs.clone();
                }
                out[b] = merge;
            }
        }
        return out;
    }

    /**
     * Each buffer's replica on the command's device into {@code reps} (its memory into {@code refs}), with
     * memory, and current when the command reads it (or writes part of it). A copy from a buffer not current
     * on the device reads it where it is current, straight into the destination: that transfer leg is
     * returned (else null).
     */
    private static Coherence.Leg replicas(Stream st, CommandTemplate template, Buffer[] bufs, boolean[] reads,
            boolean[] writes, boolean[] whole, Replica[] reps, MemRef[] refs, Coherence co) {
        DeviceRuntime d = st.device();
        List<Replica> pinned = co.pinnedForNextCommand();
        boolean remoteCopy = template instanceof CommandTemplate.Copy && bufs.length == 2 && !validOn(bufs[0], d);
        for (int b = 0; b < bufs.length; b++) {
            if (remoteCopy && b == 0) {
                reps[b] = null;
                refs[b] = null;
                continue;
            }
            boolean needData = reads[b] || (writes[b] && !whole[b]);
            reps[b] = co.prepare(bufs[b], st, needData, pinned);
            refs[b] = reps[b].data(0, bufs[b].sizeBytes());
        }
        if (!remoteCopy) {
            return null;
        }
        CommandTemplate.Copy cp = (CommandTemplate.Copy) template;
        return co.leg(bufs[0], d, cp.srcOffset(), cp.size(), CommandTemplate.slice(refs[1], cp.dstOffset(), cp.size()), null);
    }

    /** A launch's device op, given its buffers' memory (a launch repeated on the same memory reuses its op). */
    private static DeviceCommand launchOp(Prepared p, Stream st, CommandTemplate.Launch launch, MemRef[] refs) {
        int device = st.device().index();
        DeviceCommand.Launch last = p.kernel().lastLaunch(device);
        DeviceCommand.Launch built = launch.op(refs, last);
        if (built != last) {
            p.kernel().lastLaunch(device, built);
        }
        return built;
    }

    private Command newCommand(Session s, Prepared p, Replay replay, long id, Stream st, DeviceCommand op, Object result) {
        Priority priority = p.spec().priority() != null ? p.spec().priority() : s.priority();
        byte inline = op != null ? inlineWhen(p) : Command.INLINE_NEVER;
        Command c = new Command(id, s, st, op, result, p.kernel(), inline, p.size(), priority, replay.deadlineNanos(p));
        if (p.kernel() != null && ctx.deviceCount() > 1) {
            DeviceRuntime d = st.device();
            double est = placement.estimateNanos(p.kernel(), d, p.size());
            if (est > 0) {
                c.expectedNanos = (float) est;
                d.backlogAdded((long) c.expectedNanos);
            }
        }
        return c;
    }

    /**
     * Its explicit waits and the earlier commands of its batch it waits on (inputs: they pass failure on unless the
     * session's dependencies only order), and stream order.
     */
    private static void order(Command c, Session s, Prepared p, Replay replay, Command[] earlier, Stream st) {
        for (long w : replay.waits(p)) {
            c.dependOnInput(s.events.lookup(w));
        }
        for (int i : p.after()) {
            c.dependOnInput(earlier[i].event());
        }
        c.dependOnOrder(st.tail);
        st.tail = c.event();
    }

    /** A merge copy's result becomes its stream's merge buffer. */
    private void installMerge(Stream st, MergeRewrite merge) {
        if (merge.newMerge() != st.merge) {
            buffers.dropMerge(st);
            st.merge = merge.newMerge();
        }
        st.mergeInPlace = merge.inPlace();
    }

    /** Refused while tracked: the command fails, after its stream predecessor and its waits, without touching its buffers. */
    private Command refused(Session s, Prepared p, Replay replay, long id, Command[] earlier, Stream st,
            MergeRewrite merge, ArraydException refusal) {
        if (p.template() instanceof CommandTemplate.MergeCopy) {
            if (merge != null && merge.newMerge() != st.merge && !merge.inPlace()) {
                buffers.release(merge.newMerge()); // a merge buffer that was never installed
            }
            // the stream's merge buffer no longer holds what its launches expect: empty it, so that they fail
            buffers.dropMerge(st);
        }
        Command c = new Command(id, s, st, null, null, null, Command.INLINE_NEVER, 0,
                p.spec().priority() != null ? p.spec().priority() : s.priority(), CommandSpec.NO_DEADLINE);
        order(c, s, p, replay, earlier, st);
        c.cancel(refusal);
        return c;
    }

    private static boolean validOn(Buffer b, DeviceRuntime d) {
        Replica r = b.replicaOrNull(d);
        return r != null && r.valid();
    }

    /** When a command is expected to be short enough for the fast path (see SchedulerConfig): Command.INLINE_*. */
    private byte inlineWhen(Prepared p) {
        SchedulerConfig config = ctx.config();
        long bound = config.fastPathNanos();
        if (bound == 0 || p.template() instanceof CommandTemplate.RingTransfer) {
            return Command.INLINE_NEVER; // (a ring transfer waits for its client: never on the submitting thread)
        }
        if (p.kernel() != null) {
            double nanos = p.kernel().cost().estimateNanos(p.size());
            return nanos <= bound ? Command.INLINE_SHORT
                    : nanos <= config.completionFastPathNanos() ? Command.INLINE_FROM_COMPLETION : Command.INLINE_NEVER;
        }
        return p.size() <= SchedulerConfig.FAST_PATH_MAX_BYTES ? Command.INLINE_SHORT : Command.INLINE_NEVER;
    }
}
