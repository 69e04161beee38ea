package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.KernelCompiler;
import dev.arrayd.devices.api.Quote;
import dev.arrayd.devices.api.support.LiveResources;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler: sessions, buffers, kernels and streams, and the ordering of every command. This class
 * is its front; each concern has a room of its own, and arrows point one way:
 *
 * <pre>
 *  Scheduler ─┬─▶ KernelRegistry        compile, kernel handles, module reference counts
 *             ├─▶ Streams ──────────┐   created and default streams
 *             ├─▶ Graphs ─┬─────────┤   record once, replay by handle
 *             │           ▼         ▼
 *             ├─▶ Submission ─▶ BufferLifecycle ─▶ Coherence   (replicas: with ReplicaStates and
 *             │                                                ReplicaMemory, the only writers of their state)
 *             │     │   └─▶ Placement
 *             │     └─▶ CommandValidator ─▶ LaunchValidator
 *             ├─▶ DeadlineTimer, Cancellation
 *             └─▶ SchedulerContext  (config, devices, clock, the submit lock: shared by all)
 * </pre>
 *
 * <h2>The life of a command</h2>
 * <ol>
 *   <li>{@link #submit} resolves the command's handles in the caller's session and validates it
 *       (shapes, ranges, argument types; {@link CommandValidator}) — a batch is accepted whole or not at all;</li>
 *   <li>under the submit lock it registers the command's event and adds its dependencies ({@link Submission}):
 *       explicit waits and read-after-write on each buffer it reads (both pass failure on), write-after-read
 *       and write-after-write on each buffer it writes, and the previous command of its stream (these only
 *       order);</li>
 *   <li>when the last dependency completes, the command goes to its device's {@link DeviceQueue}: run at
 *       once when the device has room and nobody waits, else queued and dispatched by weighted fair share
 *       and priority class; past its deadline, or cancelled, it fails instead of running;</li>
 *   <li>the device's callback completes the event, which releases dependents and tells listeners.</li>
 * </ol>
 *
 * <p>Pure Java over {@code devices/api}: no gRPC, no protobuf.
 */
public final class Scheduler implements AutoCloseable, LiveResources.Resource {

    private static final Logger log = LoggerFactory.getLogger(Scheduler.class);

    private final SchedulerContext ctx;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    private final KernelRegistry kernels;
    private final BufferLifecycle buffers;
    private final Streams streams;
    private final Submission submission;
    private final Graphs graphs;
    private final DeadlineTimer deadlines;

    public Scheduler(SchedulerConfig config, List<Device> devices, Map<String, KernelCompiler> compilers) {
        this(config, devices, compilers, DeviceQueue.SYSTEM_CLOCK);
    }

    /**
     * @param devices   the devices to run, in the order clients see them (the first is the default)
     * @param compilers the compiler of each backend, by backend name
     * @param nanoTime  the clock of deadlines (the server's is {@link System#nanoTime()}; tests move a fake one)
     */
    public Scheduler(SchedulerConfig config, List<Device> devices, Map<String, KernelCompiler> compilers,
            LongSupplier nanoTime) {
        this(config, devices, compilers, nanoTime, SchedulerObserver.NONE);
    }

    /** @param observer told about sessions, commands and compilations (metrics); see {@link SchedulerObserver} */
    public Scheduler(SchedulerConfig config, List<Device> devices, Map<String, KernelCompiler> compilers,
            LongSupplier nanoTime, SchedulerObserver observer) {
        this.ctx = new SchedulerContext(config, devices, nanoTime, observer);
        this.kernels = new KernelRegistry(ctx, compilers);
        this.buffers = new BufferLifecycle(ctx);
        this.streams = new Streams(ctx, buffers);
        Placement placement = new Placement(ctx);
        CommandValidator validator = new CommandValidator(ctx, placement);
        this.submission = new Submission(ctx, validator, placement, buffers);
        this.graphs = new Graphs(ctx, validator, submission, buffers);
        this.deadlines = new DeadlineTimer(ctx);
        DeviceLoss.watch(ctx);
        LiveResources.register(this);
    }

    public SchedulerConfig config() {
        return ctx.config();
    }

    // ---------------------------------------------------------------- devices

    public List<DeviceRuntime> devices() {
        return ctx.devices();
    }

    /**
     * Adds devices found after the start (a peer daemon that came up): each takes the next index, after the
     * devices there are, and the observer hears of it before any command can use it. Ignored once the scheduler
     * is shut down; a device whose id is present already is refused (IllegalArgumentException).
     */
    public List<DeviceRuntime> addDevices(List<Device> added) {
        List<DeviceRuntime> out = new java.util.ArrayList<>();
        ctx.lockSubmit();
        try {
            if (ctx.closed()) {
                return out;
            }
            for (Device d : added) {
                DeviceRuntime r = ctx.add(d);
                deadlines.watch(r);
                DeviceLoss.watch(ctx, r);
                ctx.observer().deviceAdded(r);
                out.add(r);
                log.info("device {} added ({} devices)", r.id(), ctx.deviceCount());
            }
        } finally {
            ctx.unlockSubmit();
        }
        return out;
    }

    /** The device with this id; empty = the first device. */
    public DeviceRuntime device(String id) {
        return ctx.device(id);
    }

    // ---------------------------------------------------------------- sessions

    /** Opens a session with the given lease (the caller bounds it; see the server's SessionGrpcService). */
    public Session openSession(String clientName, long leaseMillis) {
        ctx.checkOpen();
        String name = clientName == null ? "" : clientName;
        FreeText.check(name, "client_name", FreeText.MAX_CLIENT_NAME);
        Session s = new Session(Handles.sessionToken(), name, ctx.now(), leaseMillis);
        s.observer = ctx.observer().sessionOpened(s);
        sessions.put(s.token(), s);
        log.debug("opened {}", s);
        return s;
    }

    /** The open session with this token. */
    public Session session(String token) {
        Session s = token == null ? null : sessions.get(token);
        if (s == null) {
            String shown = token == null || token.isEmpty() ? "(empty)"
                    : Quote.string(token.length() > 8 ? token.substring(0, 8) : token) + (token.length() > 8 ? "…" : "");
            throw ArraydException.notFound("session: " + shown + " (not found or closed)");
        }
        return s;
    }

    public Collection<Session> sessions() {
        return sessions.values();
    }

    /**
     * Closes a session: its handles disappear at once; memory, modules and streams are freed as
     * soon as the commands already submitted on them complete.
     */
    public void closeSession(Session s) {
        if (!sessions.remove(s.token(), s)) {
            return;
        }
        ctx.lockSubmit();
        try {
            s.closed = true; // a submission either registered everything before this, or sees it closed
        } finally {
            ctx.unlockSubmit();
        }
        for (long b : s.buffers.keys()) {
            forget(() -> buffers.destroy(s, b));
        }
        for (long k : s.kernels.keys()) {
            forget(() -> kernels.destroy(s, k));
        }
        for (long st : s.streams.keys()) {
            forget(() -> streams.destroy(s, st));
        }
        s.graphs.clear();
        streams.releaseDefaults(s);
        s.fireClosed();
        ctx.observer().sessionClosed(s);
        log.debug("closed {}", s);
    }

    /** Destroys a handle of a closing session; one destroyed concurrently is already gone. */
    private static void forget(Runnable destroy) {
        try {
            destroy.run();
        } catch (ArraydException destroyedConcurrently) {
            // nothing left to do
        }
    }

    // ---------------------------------------------------------------- buffers

    /** Creates a DEVICE buffer; see {@link #createBuffer(Session, DType, long[], String, String, MemoryMode, Sharing)}. */
    public Buffer createBuffer(Session s, DType dtype, long[] dims, String device, String label) {
        return createBuffer(s, dtype, dims, device, label, MemoryMode.DEVICE);
    }

    /** Creates a SHARED buffer; see {@link #createBuffer(Session, DType, long[], String, String, MemoryMode, Sharing)}. */
    public Buffer createBuffer(Session s, DType dtype, long[] dims, String device, String label, MemoryMode mode) {
        return createBuffer(s, dtype, dims, device, label, mode, Sharing.SHARED);
    }

    /**
     * Creates a buffer with its first replica on {@code device} (empty = the first device). Its memory
     * is always zeroed by a fill ordered before its first use: a block of the slab pool may have held
     * another session's data. A full device evicts other replicas to make room (see {@link Coherence});
     * RESOURCE_EXHAUSTED when nothing can be evicted. With {@link Sharing#PER_STREAM} (DEVICE buffers
     * only) it is a handle whose streams each get their own zeroed instance when they first use it: no
     * memory now.
     */
    public Buffer createBuffer(Session s, DType dtype, long[] dims, String device, String label, MemoryMode mode,
            Sharing sharing) {
        return buffers.create(s, dtype, dims, device, label, mode, sharing);
    }

    /**
     * Creates a hosted buffer that lives in {@code memory} (a slice of a client's shared-memory region),
     * whose bytes are its first contents: its host copy is that memory, and the first device that can use
     * host memory in place (the CPU device) does so as its replica — a launch there reads and writes the
     * client's memory, and downloads from it into the same memory move nothing. Other devices copy
     * straight from and to it. After the client writes the memory itself it submits a
     * {@link CommandSpec.HostWrittenOp}. {@code memory}'s release runs once the buffer is freed and no
     * command uses the memory any more.
     */
    public Buffer createBuffer(Session s, DType dtype, long[] dims, String device, String label, MemoryMode mode,
            HostMemory memory) {
        return buffers.createInHostMemory(s, dtype, dims, device, label, mode, memory);
    }

    /**
     * A padded buffer (the seed's pre-padded tensor node): memory for {@code dims} grown by
     * {@code padding}'s elements before and after each axis, its padding filled with {@code padding.value()}
     * (zero when null) and its interior with zeros, on its first replica; other replicas are copies of the
     * whole. Kernels index the padded array (its {@link Buffer#elements()} are the bounds); uploads,
     * downloads, fills and copies address the interior unless they ask for the whole padded array. A
     * padding of zeros on every axis is a plain buffer. Not with {@link Sharing#PER_STREAM}.
     */
    public Buffer createBuffer(Session s, DType dtype, long[] dims, Padding padding, String device, String label,
            MemoryMode mode) {
        return buffers.create(s, dtype, dims, padding, device, label, mode, Sharing.SHARED);
    }

    /**
     * A view of buffer {@code base} with new {@code dims}: a handle of its own over the same memory — same
     * replicas, hazards and events, so a write through either is a write of both; no copy is made. Of an
     * unpadded buffer, or with {@code wholePadded} of a padded one's whole array, any dims with that many
     * elements; of a padded buffer's interior, dims that keep its padded axes as they are and regroup only the
     * axes outside them (the view is padded alike). The memory stays until the base and every view are
     * destroyed. Not of LOCAL or PER_STREAM buffers; a view of a handle held read-only is read-only.
     */
    public Buffer createView(Session s, long base, long[] dims, boolean wholePadded, String label) {
        return buffers.createView(s, base, dims, wholePadded, label);
    }

    /** What every room of this scheduler shares (for tests in this package). */
    SchedulerContext context() {
        return ctx;
    }

    public Buffer buffer(Session s, long handle) {
        return s.buffer(handle, "");
    }

    /**
     * The MSI state of each replica of a buffer: device id (or {@code "host"}) to state, for the
     * replicas that exist (allocated, or current).
     */
    public Map<String, ReplicaState> replicaStates(Buffer b) {
        return buffers.replicaStates(b.storage());
    }

    /**
     * Gives session {@code s} a handle to another session's buffer (sharing by capability; the server
     * checks the capability). The same {@link Buffer} object, so the hazard tracker orders both
     * sessions' commands on it; {@code readOnly} handles are refused as write targets
     * (PERMISSION_DENIED). Memory is freed when the last holder destroys its handle. Returns the
     * handle in {@code s} (the buffer's own handle: handles are scoped per session).
     */
    public long importBuffer(Session s, Buffer b, boolean readOnly) {
        return buffers.importBuffer(s, b, readOnly);
    }

    /**
     * Forgets the handle now; frees its memory once every command already submitted on it completes
     * and no other session holds it (see {@link #importBuffer}).
     */
    public void destroyBuffer(Session s, long handle) {
        buffers.destroy(s, handle);
    }

    // ---------------------------------------------------------------- kernels

    /**
     * Compiles modules; all of them or none (a failure unloads what was already built).
     * Blocking: it runs the compiler. Call it off event-loop threads.
     */
    public List<CompileResult> compile(Session s, List<ModuleSpec> modules) {
        return kernels.compile(s, modules);
    }

    public CompiledKernel kernel(Session s, long handle) {
        return s.kernel(handle, "");
    }

    public void destroyKernel(Session s, long handle) {
        kernels.destroy(s, handle);
    }

    // ---------------------------------------------------------------- streams

    /** A new stream with its own native stream on {@code device} (empty = the first device). */
    public Stream createStream(Session s, String device) {
        return streams.create(s, device);
    }

    /** Forgets the stream now; its native stream closes once its pending work completes. */
    public void destroyStream(Session s, long handle) {
        streams.destroy(s, handle);
    }

    /** A stream by handle, or the session's default stream on {@code device} when the handle is 0. */
    public Stream stream(Session s, long handle, String device) {
        return streams.stream(s, handle, device);
    }

    // ---------------------------------------------------------------- events and submission

    /** The event with this id in the session ({@link Event#SUCCEEDED} for one long done). */
    public Event event(Session s, long id) {
        Event e = s.events.lookup(id);
        if (e == null) {
            throw ArraydException.notFound("event " + id + " (not found in this session)");
        }
        return e;
    }

    /**
     * Submits a batch: validates every command, then orders and starts them. The batch is accepted
     * whole or rejected whole (nothing registered, nothing run). Commands may wait on earlier commands
     * of the same batch by their event ids.
     *
     * @param listener told about each command's event when it completes (may be null)
     * @return the event of each command, in order
     * @throws ArraydException naming {@code commands[i]} and the bad value
     */
    public List<Event> submit(Session s, List<CommandSpec> batch, EventListener listener) {
        return submission.submit(s, batch, listener);
    }

    /**
     * Submits one command, as {@link #submit(Session, List, EventListener)} submits a batch of one, without a
     * list either way (what a request of one command costs the daemon).
     *
     * @return the command's event
     * @throws ArraydException naming {@code commands[0]} and the bad value
     */
    public Event submit(Session s, CommandSpec command, EventListener listener) {
        return submission.submit(s, command, listener);
    }

    // ---------------------------------------------------------------- graphs

    /**
     * Records a graph: validates its commands as {@link #submit} would (handles, shapes, argument types)
     * and keeps them for replay; nothing runs. Every command names itself with a nonzero event id, unique
     * in the graph, and may wait only on earlier commands of the graph (a replay's outside waits are given
     * when replaying).
     */
    public Graph recordGraph(Session s, List<CommandSpec> commands) {
        return graphs.record(s, commands);
    }

    /**
     * Replays a recorded graph with the changes in {@code r}, without validating its commands again:
     * only the rebound buffers (same dtype and size, writable where the graph writes) and the new scalar
     * values (same dtype) are checked. LOCAL buffers of the graph get fresh scratch memory on every
     * replay. Returns the event of each command, in order.
     */
    public List<Event> replayGraph(Session s, long graph, GraphReplay r, EventListener listener) {
        return graphs.replay(s, graph, r, listener);
    }

    /** A recorded graph of the session. */
    public Graph graph(Session s, long handle) {
        return s.graph(handle, "graph");
    }

    /** Forgets a recorded graph (replays already submitted go on). */
    public void destroyGraph(Session s, long graph) {
        graphs.destroy(s, graph);
    }

    // ---------------------------------------------------------------- cancellation and deadlines

    /**
     * Cancels commands of this session by event id: a queued one leaves its device's queue and fails
     * with CANCELLED at once; one still waiting for its dependencies fails with CANCELLED, without
     * running, as soon as they are done; a running one finishes on its device and its result is
     * dropped (its event fails with CANCELLED). Whatever waits on them fails with that cause (sticky
     * failure), and buffers destroyed meanwhile are freed once their commands are settled. Ids that are
     * unknown or already settled are ignored.
     *
     * @return how many pending commands were cancelled
     */
    public int cancel(Session s, long[] eventIds) {
        return Cancellation.cancel(s, eventIds);
    }

    /**
     * Cancels every pending command of the session as {@link #cancel} does, with {@code cause} (e.g.
     * CANCELLED when its call was cancelled, DEADLINE_EXCEEDED when the call's deadline passed).
     *
     * @return how many were cancelled
     */
    public int cancelPending(Session s, ArraydException cause) {
        return Cancellation.cancelPending(s, cause);
    }

    /**
     * Fails, with DEADLINE_EXCEEDED, every queued command whose deadline has passed on the scheduler's
     * clock, and so everything that waits on them. A timer calls it at the earliest queued deadline;
     * tests on a fake clock call it after moving the clock; a call made during the timer's run returns after
     * that run, so everything expired by then has failed. Commands waiting for dependencies are checked
     * when they become ready, and every command once more when it is dispatched.
     *
     * @return how many were dropped
     */
    public int expireDeadlines() {
        return deadlines.expire();
    }

    // ---------------------------------------------------------------- shutdown

    /**
     * First step of a graceful shutdown: from now on, new sessions, buffers, streams, compilations and
     * commands are refused with UNAVAILABLE; everything already submitted keeps running. Idempotent.
     */
    public void beginShutdown() {
        ctx.beginDraining();
    }

    /** Whether {@link #beginShutdown()} was called. */
    public boolean isShuttingDown() {
        return ctx.draining();
    }

    /** UNAVAILABLE "arrayd is shutting down: …", what every refusal during a shutdown says. */
    public static ArraydException shuttingDown() {
        return SchedulerContext.shuttingDown();
    }

    /**
     * Completes when every command submitted so far has finished. Meant after {@link #beginShutdown()},
     * when no command can be added any more.
     */
    public CompletableFuture<Void> idle() {
        List<CompletableFuture<Event>> pending = new ArrayList<>();
        for (Session s : sessions.values()) {
            for (Event e : s.events.pendingEvents()) {
                pending.add(e.toFuture());
            }
        }
        return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
    }

    /**
     * Fails every command that has not finished with {@code cause}, so that its clients hear of it at
     * once; such a command that has not started never runs, one already running on a device finishes
     * there unobserved. Returns how many were failed.
     */
    public int abortPending(ArraydException cause) {
        int n = 0;
        for (Session s : sessions.values()) {
            List<Event> pending = new ArrayList<>();
            s.events.pendingEvents().forEach(pending::add);
            for (Event e : pending) {
                if (e.fail(cause)) {
                    n++;
                }
            }
        }
        return n;
    }

    /**
     * Closes every session, waits up to {@code timeoutMillis} for submitted work, then releases the devices.
     */
    public void close(long timeoutMillis) {
        if (ctx.closed()) {
            return;
        }
        List<Event> pending = new ArrayList<>();
        for (Session s : List.copyOf(sessions.values())) {
            s.events.pendingEvents().forEach(pending::add);
            closeSession(s);
        }
        ctx.markClosed();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        for (Event e : pending) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                e.toFuture().get(left, TimeUnit.NANOSECONDS);
            } catch (Exception ignored) {
                break;
            }
        }
        deadlines.close();
        streams.close(deadline);
        for (DeviceRuntime d : ctx.devices()) {
            d.close();
        }
    }

    @Override
    public void close() {
        close(10_000);
    }

    /**
     * What this scheduler still holds: pending events of open sessions, and slab bytes of its pools (a
     * scheduler not closed, or one whose work did not finish).
     */
    @Override
    public Optional<String> leftover() {
        List<String> held = new ArrayList<>();
        for (Session s : sessions.values()) {
            int pending = s.pendingEvents();
            if (pending > 0) {
                held.add(pending + " event(s) pending in " + s);
            }
        }
        for (DeviceRuntime d : ctx.devices()) {
            long used = d.pool().usedBytes();
            if (used > 0) {
                held.add(d.id() + ": slab pool holds " + used + " bytes");
            }
        }
        return held.isEmpty() ? Optional.empty() : Optional.of("scheduler: " + String.join("; ", held));
    }
}
