package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.support.LaunchGrid;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Recorded graphs (like CUDA graphs): commands validated once and kept, then replayed by handle with
 * rebound buffers and new scalar values, without validating them again. A replay's LOCAL buffers get
 * fresh scratch memory each time.
 */
final class Graphs {

    private final SchedulerContext ctx;
    private final CommandValidator validator;
    private final Submission submission;
    private final BufferLifecycle buffers;

    Graphs(SchedulerContext ctx, CommandValidator validator, Submission submission, BufferLifecycle buffers) {
        this.ctx = ctx;
        this.validator = validator;
        this.submission = submission;
        this.buffers = buffers;
    }

    /** See {@link Scheduler#recordGraph}. */
    Graph record(Session s, List<CommandSpec> commands) {
        ctx.checkSession(s);
        if (commands.isEmpty()) {
            throw ArraydException.invalid("commands: none (expected: at least one)");
        }
        Prepared[] prepared = new Prepared[commands.size()];
        long[] ids = new long[prepared.length];
        Map<Long, Integer> index = new HashMap<>();
        Map<Stream, DType> merges = new HashMap<>(0);
        List<Buffer> used = new ArrayList<>();
        Prepared.Scratch scratch = Prepared.batchScratch();
        for (int i = 0; i < prepared.length; i++) {
            CommandSpec spec = commands.get(i);
            String at = "commands[" + i + "]: ";
            if (spec.event() == 0) {
                throw ArraydException.invalid(at + "event: 0 (expected: a nonzero id naming the command inside the graph)");
            }
            if (index.containsKey(spec.event())) {
                throw new ArraydException(ErrorCode.ALREADY_EXISTS, at + "event: " + spec.event() + " (used twice in this graph)");
            }
            int[] after = earlierCommands(spec, index, at);
            Prepared p;
            try {
                p = validator.prepare(s, spec, merges, Prepared.once(scratch));
            } catch (ArraydException e) {
                throw new ArraydException(e.code(), at + e.getMessage(), e);
            }
            for (Buffer b : p.buffers()) {
                if (b != null && !used.contains(b)) {
                    used.add(b);
                }
            }
            CommandSpec stored = new CommandSpec(0, null, spec.stream(), spec.op(), spec.deadlineNanos(), spec.priority());
            prepared[i] = p.with(stored, p.buffers(), p.template(), after);
            ids[i] = spec.event();
            index.put(spec.event(), i);
        }
        Graph g = new Graph(Handles.next(), prepared, ids, used);
        s.graphs.put(g.handle(), g);
        return g;
    }

    /** The positions of the commands of the graph that {@code spec} waits on (all must come before it). */
    private static int[] earlierCommands(CommandSpec spec, Map<Long, Integer> index, String at) {
        long[] waits = spec.waits();
        int[] after = new int[waits.length];
        for (int w = 0; w < waits.length; w++) {
            Integer j = index.get(waits[w]);
            if (j == null) {
                throw ArraydException.invalid(at + "wait_events[" + w + "]: event " + waits[w] + " (expected: an earlier "
                        + "command of this graph; waits on other work are given when replaying)");
            }
            after[w] = j;
        }
        return after;
    }

    /** See {@link Scheduler#replayGraph}. */
    List<Event> replay(Session s, long graph, GraphReplay r, EventListener listener) {
        ctx.checkSession(s);
        Graph g = s.graph(graph, "graph");
        Map<Buffer, Buffer> swap = rebind(s, g, r);
        CommandTemplate[] templates = scalars(g, r);
        if (r.firstEvent() != 0) {
            EventTable.checkClientId(r.firstEvent(), "first_event");
            EventTable.checkClientId(r.firstEvent() + g.commands.length - 1, "first_event + " + (g.commands.length - 1));
        }
        List<Buffer> scratch = new ArrayList<>(0);
        for (Buffer b : g.buffers) {
            if (b.memoryMode() == MemoryMode.LOCAL && !swap.containsKey(b)) {
                Buffer fresh = buffers.newBuffer(s, b.dtype(), b.layout(), b.padValue(), b.device(), MemoryMode.LOCAL,
                        b.label(), true);
                scratch.add(fresh);
                swap.put(b, fresh);
            }
        }
        // the recorded commands themselves, with the replay's changes applied as they are tracked: nothing per command
        Replay replay = new Replay(r.firstEvent(), r.waits(), r.deadlineNanos(), swap.isEmpty() ? null : swap, templates);
        try {
            return submission.enqueue(s, g.commands, replay, listener);
        } catch (RuntimeException e) {
            ctx.lockSubmit();
            try {
                for (Buffer b : scratch) {
                    if (!b.destroyed) {
                        buffers.release(b); // the replay was refused: its fresh scratch goes at once
                    }
                }
            } finally {
                ctx.unlockSubmit();
            }
            throw e;
        }
    }

    /** The buffers a replay rebinds: same dtype and size, writable where the graph writes them. */
    private static Map<Buffer, Buffer> rebind(Session s, Graph g, GraphReplay r) {
        Map<Buffer, Buffer> swap = new HashMap<>();
        for (Map.Entry<Long, Long> e : r.rebind().entrySet()) {
            Buffer from = null;
            for (Buffer b : g.buffers) {
                if (b.handle() == e.getKey()) {
                    from = b;
                }
            }
            String at = "rebind[" + Handles.format(e.getKey()) + "]: ";
            if (from == null) {
                throw ArraydException.invalid(at + "buffer " + Handles.format(e.getKey()) + " (not used by " + g + ")");
            }
            boolean written = false;
            for (Prepared p : g.commands) {
                for (int b = 0; b < p.buffers().length; b++) {
                    written |= p.buffers()[b] == from && p.writes()[b];
                }
            }
            Buffer to = (written ? s.writableBuffer(e.getValue(), "rebind") : s.buffer(e.getValue(), "rebind")).storage();
            if (to.dtype() != from.dtype() || to.sizeBytes() != from.sizeBytes()
                    || (from.isPadded() || to.isPadded()) && !to.layout().equals(from.layout())) {
                throw ArraydException.invalid(at + to + " (expected: " + from.dtype().wireName() + " of "
                        + from.sizeBytes() + " bytes, like " + from + (from.isPadded() || to.isPadded()
                        ? ", with the same dims and padding" : "") + ")");
            }
            swap.put(from, to);
        }
        return swap;
    }

    /** Per command, its template with the replay's scalar values; null when none changes. */
    private static CommandTemplate[] scalars(Graph g, GraphReplay r) {
        if (r.scalars().isEmpty()) {
            return null;
        }
        CommandTemplate[] templates = new CommandTemplate[g.commands.length];
        for (int i = 0; i < templates.length; i++) {
            templates[i] = g.commands[i].template();
        }
        for (int v = 0; v < r.scalars().size(); v++) {
            GraphReplay.ScalarValue sv = r.scalars().get(v);
            String at = "scalars[" + v + "]: ";
            if (sv.command() < 0 || sv.command() >= templates.length
                    || !(templates[sv.command()] instanceof CommandTemplate.Launch launch)) {
                throw ArraydException.invalid(at + "command " + sv.command() + " (expected: the position of a launch in "
                        + g + ")");
            }
            List<KernelParam> params = g.commands[sv.command()].kernel().signature().params();
            if (sv.arg() < 0 || sv.arg() >= params.size() || params.get(sv.arg()).isBuffer()) {
                throw ArraydException.invalid(at + "arg " + sv.arg() + " (expected: a scalar parameter of "
                        + LaunchValidator.describe(g.commands[sv.command()].kernel().signature()) + ")");
            }
            if (sv.value() == null || sv.value().dtype() != params.get(sv.arg()).dtype()) {
                throw ArraydException.invalid(at + (sv.value() == null ? "unset" : sv.value().dtype().wireName() + " scalar")
                        + " (expected: " + params.get(sv.arg()).dtype().wireName() + " for parameter "
                        + params.get(sv.arg()).name() + ")");
            }
            templates[sv.command()] = launch.withScalar(sv.arg(), sv.value());
        }
        for (int i = 0; i < templates.length; i++) {
            if (templates[i] != g.commands[i].template() && templates[i] instanceof CommandTemplate.Launch l
                    && l.kernel().ir() != null) {
                checkIr(l, g.commands[i], "commands[" + i + "]: ");
            }
        }
        return templates;
    }

    /**
     * A launch of an IR kernel with the replay's scalars still meets what the kernel's proofs assume (scalar bounds,
     * buffer extents that depend on scalars): refused before anything runs, like a submitted launch.
     */
    private static void checkIr(CommandTemplate.Launch l, Prepared recorded, String at) {
        Object[] args = l.args();
        long[] values = new long[args.length];
        boolean[] given = new boolean[args.length];
        long[] extents = new long[args.length];
        for (int a = 0; a < args.length; a++) {
            if (args[a] instanceof KernelArg.Scalar sc) {
                values[a] = sc.bits();
                given[a] = true;
            } else if (args[a] instanceof Integer b && recorded.buffers()[b] != null) {
                extents[a] = recorded.buffers()[b].elements(); // a rebound buffer has the same size
            } else if (args[a] instanceof CommandTemplate.Range r) {
                extents[a] = r.bytes() / l.kernel().signature().params().get(a).dtype().byteSize();
            } else {
                extents[a] = Long.MAX_VALUE; // the merge buffer: checked by the device
            }
        }
        try {
            l.kernel().ir().checkLaunch(l.globalDims(), l.localDims(), values, given, extents,
                    new LaunchGrid.Names("launch.global_dims", "launch.local_dims"), "launch.args");
        } catch (ArraydException e) {
            throw new ArraydException(e.code(), at + e.getMessage(), e);
        }
    }

    /** Forgets a recorded graph (replays already submitted go on). */
    void destroy(Session s, long graph) {
        Graph g = s.graphs.remove(graph);
        if (g == null) {
            throw ArraydException.notFound("graph " + Handles.format(graph) + " (not found in this session)");
        }
        g.destroyed = true;
    }
}
