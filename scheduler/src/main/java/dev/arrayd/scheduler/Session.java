package dev.arrayd.scheduler;

import dev.arrayd.devices.api.support.GuardedBy;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DeviceId;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A client's namespace (OCANNL's context): its buffers, kernels, streams and events. Every
 * handle is looked up here, so another session's handle is simply NOT_FOUND.
 */
public final class Session {

    /** The tenant of a session nobody named one for. */
    public static final String DEFAULT_TENANT = "default";

    private final String token;
    private final String clientName;
    private final long createdNanos;
    final EventTable events = new EventTable();
    // handle tables: looked up for every command, so keyed by primitive longs (no boxing)
    final LockedLongMap<Buffer> buffers = new LockedLongMap<>();
    /** Handles of buffers this session may only read (opened through a read-only capability). */
    final java.util.Set<Long> readOnlyBuffers = ConcurrentHashMap.newKeySet();
    final LockedLongMap<CompiledKernel> kernels = new LockedLongMap<>();
    final LockedLongMap<Stream> streams = new LockedLongMap<>();
    final LockedLongMap<Graph> graphs = new LockedLongMap<>();
    final Map<DeviceId, Stream> defaultStreams = new ConcurrentHashMap<>();
    // the default stream asked for last (one of defaultStreams, which never drops one): a cache in front of the map
    private volatile Stream lastDefaultStream;
    private final java.util.List<Runnable> closeListeners = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile long leaseMillis;
    // fair share: read by the device dispatchers whenever they charge this session
    private volatile String tenant = DEFAULT_TENANT;
    private volatile int weight = 1;
    /** See {@link #setDependenciesOnlyOrder}. */
    private volatile boolean dependenciesOnlyOrder;
    private volatile Priority priority = Priority.NORMAL;
    /** Written under the lock (a submission either registered everything before the close, or sees it); volatile for readers. */
    @GuardedBy("SchedulerContext.submitLock")
    volatile boolean closed;
    /** Where the bytes of per-stream instances are charged (the server's tenant quota). */
    private volatile MemoryCharge memoryCharge = MemoryCharge.NONE;
    /** Told the handle of each LOCAL buffer a batch consumed (see {@link #onBufferConsumed}). */
    private volatile java.util.function.LongConsumer bufferConsumed = h -> { };
    // set once by Scheduler.openSession, before the session is visible to anyone
    CommandObserver observer = CommandObserver.NONE;
    /** The scratch of this session's session-local submissions ({@link SessionLocal}), used while it holds {@link #tryEnterLocal}. */
    final SubmitScratch localScratch = new SubmitScratch();
    /** The {@code Prepared} a single-command submission of this session uses while it holds {@link #tryEnterLocal}. */
    final Prepared localPrepared = Prepared.reusable();
    /** Whether a thread makes a session-local submission of this session now (see {@link #tryEnterLocal}). */
    private volatile boolean submittingLocally;
    private static final java.lang.invoke.VarHandle SUBMITTING_LOCALLY;

    static {
        try {
            SUBMITTING_LOCALLY = java.lang.invoke.MethodHandles.lookup().findVarHandle(Session.class, "submittingLocally",
                    boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Claims the session's one session-local submission at a time ({@link SessionLocal}; with the submit lock's read
     * side): false while another thread of the session makes one, which sends this one to the write side instead
     * of waiting. Given back with {@link #exitLocal}.
     */
    boolean tryEnterLocal() {
        return SUBMITTING_LOCALLY.compareAndSet(this, false, true);
    }

    void exitLocal() {
        SUBMITTING_LOCALLY.setRelease(this, false);
    }

    /** Whether some thread makes a session-local submission of this session now (for assertions). */
    boolean inLocal() {
        return submittingLocally;
    }
    /** See {@link LastDependency}. */
    @GuardedBy("SchedulerContext.submitLock")
    final LastDependency lastDependency = new LastDependency();

    /**
     * The dependency the command being built added last: the next command of a chain usually waits on the same
     * event several times (its explicit wait, stream order, the buffer's last writer), and one listener is
     * enough. A session's commands are built one at a time (under the submit lock's write side, or its read side
     * and {@link #tryEnterLocal}), so one per session serves them all
     * (kept here, not in each command: a command is allocated for every submission).
     */
    static final class LastDependency {
        Command of;
        Event event;
        boolean data;

        void set(Command of, Event event, boolean data) {
            this.of = of;
            this.event = event;
            this.data = data;
        }
    }

    Session(String token, String clientName, long createdNanos, long leaseMillis) {
        this.token = token;
        this.clientName = clientName;
        this.createdNanos = createdNanos;
        this.leaseMillis = leaseMillis;
    }

    /** Sets where this session's per-stream instances are charged (default: nowhere). */
    public void setMemoryCharge(MemoryCharge charge) {
        this.memoryCharge = java.util.Objects.requireNonNull(charge, "charge");
    }

    MemoryCharge memoryCharge() {
        return memoryCharge;
    }

    /**
     * Sets who this session works for and that tenant's weight: a tenant of weight 3 gets three times the
     * device time of a tenant of weight 1 when both have work waiting, however many sessions each has, and
     * the sessions of one tenant share its part equally (see {@link DeviceQueue}); give every session of a
     * tenant the tenant's weight. Defaults: {@value #DEFAULT_TENANT}, 1. Takes effect for commands
     * dispatched from now on (for a new tenant, once the session has nothing queued or running).
     */
    public void setTenant(String tenant, int weight) {
        if (weight < 1 || weight > 1_000_000) {
            throw ArraydException.invalid("weight: " + weight + " (expected: 1 to 1000000)");
        }
        this.tenant = tenant == null || tenant.isEmpty() ? DEFAULT_TENANT : tenant;
        this.weight = weight;
    }

    public String tenant() {
        return tenant;
    }

    /**
     * Whether dependencies only order this session's commands: one runs after what it waits for and what wrote the
     * data it uses, whether those succeeded or not, and fails only by itself (no sticky failure). For a client that
     * keeps the failure rules itself: an entry daemon, whose buffers on this daemon are its slabs, each holding many
     * of its own buffers, and whose waits here stand for its own streams' order. Set before the session's first
     * command.
     */
    public void setDependenciesOnlyOrder(boolean on) {
        dependenciesOnlyOrder = on;
    }

    /** See {@link #setDependenciesOnlyOrder}. */
    boolean dependenciesOnlyOrder() {
        return dependenciesOnlyOrder;
    }

    public int weight() {
        return weight;
    }

    /** The priority class of this session's commands that name none. Default NORMAL. */
    public void setPriority(Priority priority) {
        this.priority = java.util.Objects.requireNonNull(priority, "priority");
    }

    public Priority priority() {
        return priority;
    }

    /** The lease granted to this session (the server reclaims a session whose lease ran out). */
    public long leaseMillis() {
        return leaseMillis;
    }

    /** Runs {@code listener} when the session closes (at once if it already has). Must be fast. */
    public void onClose(Runnable listener) {
        closeListeners.add(listener);
        if (closed && closeListeners.remove(listener)) {
            listener.run();
        }
    }

    void fireClosed() {
        for (Runnable r : closeListeners) {
            if (closeListeners.remove(r)) {
                r.run();
            }
        }
    }

    /** The session's unguessable token. */
    public String token() {
        return token;
    }

    public String clientName() {
        return clientName;
    }

    public long createdNanos() {
        return createdNanos;
    }

    public boolean isClosed() {
        return closed;
    }

    public int bufferCount() {
        return buffers.size();
    }

    public int pendingEvents() {
        return events.pendingCount();
    }

    public Collection<Buffer> buffers() {
        return buffers.values();
    }

    Buffer buffer(long handle, String what) {
        Buffer b = buffers.get(handle);
        if (b == null) {
            throw ArraydException.notFound((what.isEmpty() ? "" : what + ": ") + "buffer " + Handles.format(handle)
                    + " (not found in this session)");
        }
        return b;
    }

    /** A buffer this command writes: PERMISSION_DENIED when the session holds it read-only. */
    Buffer writableBuffer(long handle, String what) {
        Buffer b = buffer(handle, what);
        if (!readOnlyBuffers.isEmpty() && readOnlyBuffers.contains(handle)) {
            throw new ArraydException(dev.arrayd.devices.api.ErrorCode.PERMISSION_DENIED, (what.isEmpty() ? "" : what
                    + ": ") + "buffer " + Handles.format(handle) + " is shared with this session read-only");
        }
        return b;
    }

    /** Whether this session holds the buffer read-only. */
    public boolean isReadOnly(long handle) {
        return !readOnlyBuffers.isEmpty() && readOnlyBuffers.contains(handle); // no boxing in the common case
    }

    CompiledKernel kernel(long handle, String what) {
        CompiledKernel k = kernels.get(handle);
        if (k == null) {
            throw ArraydException.notFound((what.isEmpty() ? "" : what + ": ") + "kernel " + Handles.format(handle)
                    + " (not found in this session)");
        }
        return k;
    }

    Stream stream(long handle, String what) {
        Stream s = streams.get(handle);
        if (s == null) {
            throw ArraydException.notFound((what.isEmpty() ? "" : what + ": ") + "stream " + Handles.format(handle)
                    + " (not found in this session)");
        }
        return s;
    }

    /**
     * Told the handle of each buffer that disappears without {@code destroyBuffer}: a LOCAL buffer
     * consumed by the batch (or replay) that used it. One listener; runs under the scheduler's submit lock.
     */
    public void onBufferConsumed(java.util.function.LongConsumer listener) {
        bufferConsumed = listener;
    }

    void bufferConsumed(long handle) {
        bufferConsumed.accept(handle);
    }

    Graph graph(long handle, String what) {
        Graph g = graphs.get(handle);
        if (g == null) {
            throw ArraydException.notFound((what.isEmpty() ? "" : what + ": ") + "graph " + Handles.format(handle)
                    + " (not found in this session)");
        }
        return g;
    }

    /** The session's default stream on {@code d}: made on first use, over one of the device's shared native streams. */
    Stream defaultStream(DeviceRuntime d) {
        Stream last = lastDefaultStream; // most launches go to the device the last one went to
        if (last != null && last.device() == d) {
            return last;
        }
        Stream st = defaultStreams.get(d.id());
        if (st == null) {
            st = defaultStreams.computeIfAbsent(d.id(), id -> new Stream(0, d, d.nextSharedStream(), false));
        }
        lastDefaultStream = st;
        return st;
    }

    void settled(Event e) {
        events.settled(e);
    }

    @Override
    public String toString() {
        return "session " + token.substring(0, 8) + "… (" + clientName + ")";
    }
}
