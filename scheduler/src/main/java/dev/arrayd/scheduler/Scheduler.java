package dev.arrayd.scheduler;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelCompiler;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler: sessions, buffers, kernels and streams, and the ordering of every command.
 *
 * <h2>The life of a command</h2>
 * <ol>
 *   <li>{@link #submit} resolves the command's handles in the caller's session and validates it
 *       (shapes, ranges, argument types) — a batch is accepted whole or not at all;</li>
 *   <li>under the submit lock it registers the command's event and adds its dependencies: explicit
 *       waits and read-after-write on each buffer it reads (both pass failure on), write-after-read
 *       and write-after-write on each buffer it writes, and the previous command of its stream
 *       (these only order);</li>
 *   <li>when the last dependency completes, the command goes to its device's {@link DeviceQueue}: run at
 *       once when the device has room and nobody waits, else queued and dispatched by weighted fair share
 *       and priority class; past its deadline, or cancelled, it fails instead of running;</li>
 *   <li>the device's callback completes the event, which releases dependents and tells listeners.</li>
 * </ol>
 *
 * <p>Pure Java over {@code devices/api}: no gRPC, no protobuf.
 */
public final class Scheduler implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Scheduler.class);
    private static final Pattern IDENT = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,127}");

    private final SchedulerConfig config;
    private final Map<DeviceId, DeviceRuntime> devices = new LinkedHashMap<>();
    private final List<DeviceRuntime> deviceList;
    private final Map<String, KernelCompiler> compilers;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    private final Object submitLock = new Object();
    private final ExecutorService housekeeping;
    private final ScheduledExecutorService deadlineTimer;
    private final LongSupplier nanoTime;
    private final SchedulerObserver observer;
    private volatile boolean closed;
    // set under submitLock by beginShutdown: no new sessions or commands from then on
    private volatile boolean draining;

    /**
     * @param devices   the devices to run, in the order clients see them (the first is the default)
     * @param compilers the compiler of each backend, by backend name
     */
    public Scheduler(SchedulerConfig config, List<Device> devices, Map<String, KernelCompiler> compilers,
            LongSupplier nanoTime) {
        this(config, devices, compilers, nanoTime, SchedulerObserver.NONE);
    }

    /** @param observer told about sessions, commands and compilations (metrics); see {@link SchedulerObserver} */
    public Scheduler(SchedulerConfig config, List<Device> devices, Map<String, KernelCompiler> compilers,
            LongSupplier nanoTime, SchedulerObserver observer) {
        this.observer = observer;
        if (devices.isEmpty()) {
            throw new IllegalArgumentException("devices: none (expected: at least one)");
        }
        this.config = config;
        this.coherence = new Coherence(null, Priority.NORMAL, config.fastPathNanos() > 0, SchedulerConfig.FAST_PATH_MAX_BYTES);
        this.nanoTime = nanoTime;
        for (Device d : devices) {
            this.devices.put(d.id(), new DeviceRuntime(d, d.id().backend(), config, this.devices.size(), nanoTime));
        }
        this.deviceList = List.copyOf(this.devices.values());
        this.compilers = Map.copyOf(compilers);
        this.housekeeping = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "arrayd-housekeeping");
            t.setDaemon(true);
            return t;
        });
        this.deadlineTimer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "arrayd-deadlines");
            t.setDaemon(true);
            return t;
        });
        // No periodic tick: an idle daemon wakes for nothing. A queue that gets an earlier deadline arms
        // the timer for it; each expiry run re-arms for the earliest deadline left.
        for (DeviceRuntime d : deviceList) {
            d.queue().onEarlierDeadline(this::armDeadline);
        }
    }

    /** Shortest wait of the deadline timer: a deadline is met within this much (and the dispatcher checks exactly). */
    static final long MIN_DEADLINE_DELAY_NANOS = 100_000;

    // the deadline the timer is armed for (NO_DEADLINE: not armed); guarded by deadlineArm
    private final Object deadlineArm = new Object();
    private long armedFor = CommandSpec.NO_DEADLINE;

    /** Makes sure the timer runs at {@code deadlineNanos} (scheduler clock) or earlier. */
    private void armDeadline(long deadlineNanos) {
        synchronized (deadlineArm) {
            if (deadlineNanos >= armedFor) {
                return;
            }
            armedFor = deadlineNanos;
            // at least MIN_DEADLINE_DELAY: a clock that does not move with time (tests) must not spin the timer
            long delay = Math.max(MIN_DEADLINE_DELAY_NANOS, deadlineNanos - nanoTime.getAsLong());
            try {
                deadlineTimer.schedule(this::deadlineReached, delay, TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.RejectedExecutionException closing) {
                armedFor = CommandSpec.NO_DEADLINE; // shut down: commands are checked when dispatched
            }
        }
    }

    /** The timer: drops what expired, then re-arms for the earliest deadline still queued. */
    private void deadlineReached() {
        synchronized (deadlineArm) {
            armedFor = CommandSpec.NO_DEADLINE;
        }
        expireDeadlinesQuietly();
        long next = CommandSpec.NO_DEADLINE;
        for (DeviceRuntime d : deviceList) {
            next = Math.min(next, d.queue().earliestDeadline());
        }
        if (next != CommandSpec.NO_DEADLINE) {
            armDeadline(next);
        }
    }

    public Scheduler(SchedulerConfig config, List<Device> devices, Map<String, KernelCompiler> compilers) {
        this(config, devices, compilers, System::nanoTime);
    }

    public SchedulerConfig config() {
        return config;
    }

    // ---------------------------------------------------------------- devices

    public List<DeviceRuntime> devices() {
        return deviceList;
    }

    /** The device with this id; empty = the first device. */
    public DeviceRuntime device(String id) {
        if (id == null || id.isEmpty()) {
            return deviceList.getFirst();
        }
        DeviceId parsed;
        try {
            parsed = DeviceId.parse(id);
        } catch (IllegalArgumentException e) {
            throw ArraydException.invalid(e.getMessage());
        }
        DeviceRuntime d = devices.get(parsed);
        if (d == null) {
            throw ArraydException.notFound("device: \"" + id + "\" (not found; devices: " + devices.keySet() + ")");
        }
        return d;
    }

    // ---------------------------------------------------------------- sessions

    /** Opens a session with the given lease (the caller bounds it; see the server's SessionGrpcService). */
    public Session openSession(String clientName, long leaseMillis) {
        checkOpen();
        Session s = new Session(Handles.sessionToken(), clientName == null ? "" : clientName, nanoTime.getAsLong(),
                leaseMillis);
        s.observer = observer.sessionOpened(s);
        sessions.put(s.token(), s);
        log.debug("opened {}", s);
        return s;
    }

    /** The open session with this token. */
    public Session session(String token) {
        Session s = token == null ? null : sessions.get(token);
        if (s == null) {
            String shown = token == null || token.isEmpty() ? "(empty)"
                    : "\"" + (token.length() > 8 ? token.substring(0, 8) + "…" : token) + "\"";
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
        if (sessions.remove(s.token(), s)) {
            synchronized (submitLock) {
                s.closed = true; // a submission either registered everything before this, or sees it closed
            }
            for (long b : s.buffers.keys()) {
                try {
                    destroyBuffer(s, b);
                } catch (ArraydException ignored) {
                    // destroyed concurrently
                }
            }
            for (long k : s.kernels.keys()) {
                try {
                    destroyKernel(s, k);
                } catch (ArraydException ignored) {
                    // destroyed concurrently
                }
            }
            for (long st : s.streams.keys()) {
                try {
                    destroyStream(s, st);
                } catch (ArraydException ignored) {
                    // destroyed concurrently
                }
            }
            s.graphs.clear();
            synchronized (submitLock) {
                for (Stream st : s.defaultStreams.values()) {
                    dropMerge(st);
                    dropInstances(st);
                }
            }
            s.fireClosed();
            observer.sessionClosed(s);
            log.debug("closed {}", s);
        }
    }

    // ---------------------------------------------------------------- buffers

    /** Creates a DEVICE buffer; see {@link #createBuffer(Session, DType, long[], String, String, MemoryMode)}. */
    public Buffer createBuffer(Session s, DType dtype, long[] dims, String device, String label) {
        return createBuffer(s, dtype, dims, device, label, MemoryMode.DEVICE);
    }

    /**
     * Creates a buffer with its first replica on {@code device} (empty = the first device). Its memory
     * is always zeroed by a fill ordered before its first use: a block of the slab pool may have held
     * another session's data. A full device evicts other replicas to make room (see {@link Coherence});
     * RESOURCE_EXHAUSTED when nothing can be evicted.
     */
    public Buffer createBuffer(Session s, DType dtype, long[] dims, String device, String label, MemoryMode mode) {
        return createBuffer(s, dtype, dims, device, label, mode, Sharing.SHARED);
    }

    /**
     * Creates a buffer; with {@link Sharing#PER_STREAM} (DEVICE buffers only) it is a handle whose streams
     * each get their own zeroed instance when they first use it (see {@link Sharing}): no memory now.
     */
    public Buffer createBuffer(Session s, DType dtype, long[] dims, String device, String label, MemoryMode mode,
            Sharing sharing) {
        if (sharing == Sharing.PER_STREAM) {
            checkSession(s);
            MemoryMode m = mode == null ? MemoryMode.DEVICE : mode;
            if (m != MemoryMode.DEVICE) {
                throw ArraydException.invalid("sharing: PER_STREAM with memory mode " + m + " (expected: DEVICE; a hosted or "
                        + "LOCAL buffer has one array)");
            }
            if (dtype == null) {
                throw ArraydException.invalid("dtype: unspecified (expected: one of " + Arrays.toString(DType.values()) + ")");
            }
            long elements = elementCount(dims, dtype);
            DeviceRuntime d = device(device);
            Buffer b = new Buffer(Handles.next(), dtype, dims, elements, d, deviceList.size(), m,
                    label == null ? "" : label, false, true);
            s.buffers.put(b.handle(), b);
            return b;
        }
        checkSession(s);
        if (dtype == null) {
            throw ArraydException.invalid("dtype: unspecified (expected: one of " + Arrays.toString(DType.values()) + ")");
        }
        long elements = elementCount(dims, dtype);
        DeviceRuntime d = device(device);
        if (!d.info().dtypes().contains(dtype)) {
            throw ArraydException.invalid("dtype: " + dtype.wireName() + " (not supported by device " + d.id() + ")");
        }
        Buffer b = newBuffer(s, dtype, dims, elements, d, mode == null ? MemoryMode.DEVICE : mode,
                label == null ? "" : label, false);
        s.buffers.put(b.handle(), b);
        return b;
    }

    /** A buffer with a zero-filled replica on {@code d} (and a zero host copy for HOSTED_CHANGED_ON_DEVICES). */
    private Buffer newBuffer(Session s, DType dtype, long[] dims, long elements, DeviceRuntime d, MemoryMode mode,
            String label, boolean internal) {
        Buffer b = new Buffer(Handles.next(), dtype, dims, elements, d, deviceList.size(), mode, label, internal);
        Coherence co = new Coherence(s, s.priority(), config.fastPathNanos() > 0, SchedulerConfig.FAST_PATH_MAX_BYTES);
        try {
            synchronized (submitLock) {
                if (draining) {
                    throw shuttingDown();
                }
                initReplica(s, b, d, co);
            }
        } finally {
            co.release(); // write-backs of evicted replicas too, when the allocation failed after all
        }
        return b;
    }

    /** The first replica of a new buffer: zero-filled (after the fences of reused memory). Under the submit lock. */
    private static void initReplica(Session s, Buffer b, DeviceRuntime d, Coherence co) {
        {
            Replica r = b.replica(d);
            co.allocate(r, new ArrayList<>(List.of(r)));
            Command c = co.command(defaultStream(s, d), new DeviceCommand.Fill(r.data(0, b.sizeBytes()), 0, 1),
                    b.sizeBytes());
            Coherence.writeOrder(c, r); // fences of reused memory
            r.ready = c.event();
            r.state = ReplicaState.MODIFIED;
            if (b.memoryMode() == MemoryMode.HOSTED_CHANGED_ON_DEVICES) {
                Coherence.zeroHost(b);
                Coherence.normalize(b);
            }
        }
    }

    public Buffer buffer(Session s, long handle) {
        return s.buffer(handle, "");
    }

    /**
     * The MSI state of each replica of a buffer: device id (or {@code "host"}) to state, for the
     * replicas that exist (allocated, or current).
     */
    public Map<String, ReplicaState> replicaStates(Buffer b) {
        Map<String, ReplicaState> out = new LinkedHashMap<>();
        synchronized (submitLock) {
            for (Replica r : b.replicas) {
                if (r != null && (r.allocated() || r.valid())) {
                    out.put(r.device.id().toString(), r.state);
                }
            }
            if (b.host.allocated() || b.host.valid()) {
                out.put("host", b.host.state);
            }
        }
        return out;
    }

    /**
     * Gives session {@code s} a handle to another session's buffer (sharing by capability; the server
     * checks the capability). The same {@link Buffer} object, so the hazard tracker orders both
     * sessions' commands on it; {@code readOnly} handles are refused as write targets
     * (PERMISSION_DENIED). Memory is freed when the last holder destroys its handle. Returns the
     * handle in {@code s} (the buffer's own handle: handles are scoped per session).
     */
    public long importBuffer(Session s, Buffer b, boolean readOnly) {
        checkSession(s);
        if (b.memoryMode() == MemoryMode.LOCAL) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, b + " is LOCAL (scratch for one graph; not shareable)");
        }
        if (b.holders.getAndUpdate(n -> n == 0 ? 0 : n + 1) == 0) {
            throw ArraydException.notFound(b + " (destroyed)");
        }
        if (readOnly) {
            s.readOnlyBuffers.add(b.handle());
        }
        if (s.buffers.putIfAbsent(b.handle(), b) != null) {
            b.holders.decrementAndGet(); // already held: one handle per session
            if (!readOnly) {
                s.readOnlyBuffers.remove(b.handle());
            }
        }
        if (s.closed && s.buffers.remove(b.handle(), b)) {
            b.holders.decrementAndGet();
        }
        return b.handle();
    }

    /**
     * Forgets the handle now; frees its memory once every command already submitted on it completes
     * and no other session holds it (see {@link #importBuffer}).
     */
    public void destroyBuffer(Session s, long handle) {
        Buffer b = s.buffers.remove(handle);
        if (b == null) {
            throw ArraydException.notFound("buffer " + Handles.format(handle) + " (not found in this session)");
        }
        s.readOnlyBuffers.remove(handle);
        if (b.holders.decrementAndGet() > 0) {
            return; // another session still holds it
        }
        synchronized (submitLock) {
            release(b);
        }
    }

    /** Frees every replica of a buffer nobody holds (memory reused after its last users). Under the submit lock. */
    private static void release(Buffer b) {
        b.destroyed = true;
        if (b.instances != null) {
            for (Map.Entry<Stream, Buffer> e : b.instances.entrySet()) {
                if (e.getKey().instances != null) {
                    e.getKey().instances.remove(e.getValue());
                }
                release(e.getValue());
            }
            b.instances = null;
        }
        if (b.charge != null) {
            b.charge.release(b.sizeBytes());
            b.charge = null;
        }
        for (Replica r : b.replicas) {
            if (r != null) {
                Coherence.drop(r);
            }
        }
        Coherence.dropHost(b.host);
    }

    // ---------------------------------------------------------------- kernels

    /**
     * Compiles modules; all of them or none (a failure unloads what was already built).
     * Blocking: it runs the compiler. Call it off event-loop threads.
     */
    public List<CompileResult> compile(Session s, List<ModuleSpec> modules) {
        checkSession(s);
        if (modules.isEmpty()) {
            throw ArraydException.invalid("modules: none (expected: at least one)");
        }
        List<CompileResult> results = new ArrayList<>();
        List<ModuleRef> built = new ArrayList<>();
        try {
            List<List<String>> backends = new ArrayList<>();
            for (int m = 0; m < modules.size(); m++) {
                backends.add(backendsFor(modules.get(m), "modules[" + m + "]"));
            }
            List<Map<String, KernelModule>> compiled = compileByBackend(modules, backends);
            for (int m = 0; m < modules.size(); m++) {
                results.add(register(s, modules.get(m), backends.get(m), compiled.get(m), built));
            }
        } catch (RuntimeException e) {
            for (CompileResult r : results) {
                for (CompiledKernel k : r.kernels()) {
                    s.kernels.remove(k.handle());
                }
            }
            for (ModuleRef ref : built) {
                while (ref.refCount() > 0) {
                    ref.release();
                }
            }
            throw e;
        }
        return results;
    }

    /** Checks a module (native source allowed, signatures, IR) and picks the backends it is compiled for. */
    private List<String> backendsFor(ModuleSpec spec, String where) {
        KernelSource src = spec.source();
        if (src.dialect().isNative() && !config.allowNativeSource()) {
            throw new ArraydException(ErrorCode.PERMISSION_DENIED, where + ".dialect: " + src.dialect()
                    + " is native source, which can do anything the daemon can; the daemon was started without"
                    + " --allow-native-source");
        }
        validateSignatures(src.entryPoints(), where);
        if (src.ir() != null) {
            // once here, so that a bad module is named by its place in the request; backends check again
            dev.arrayd.devices.api.ir.IrValidator.check(src.ir(), where + ".ir");
        }
        List<String> backends = new ArrayList<>();
        if (spec.backend() != null && !spec.backend().isEmpty()) {
            KernelCompiler c = compilers.get(spec.backend());
            if (c == null) {
                throw ArraydException.notFound(where + ".backend: \"" + spec.backend() + "\" (not available; available: "
                        + compilers.keySet() + ")");
            }
            if (!c.dialects().contains(src.dialect())) {
                throw ArraydException.invalid(where + ".dialect: " + src.dialect() + " (backend " + spec.backend()
                        + " compiles " + c.dialects() + ")");
            }
            backends.add(spec.backend());
        } else {
            for (var e : compilers.entrySet()) {
                if (e.getValue().dialects().contains(src.dialect())) {
                    backends.add(e.getKey());
                }
            }
            backends.sort(null);
            if (backends.isEmpty()) {
                throw ArraydException.invalid(where + ".dialect: " + src.dialect()
                        + " (no available backend compiles it; backends: " + compilers.keySet() + ")");
            }
        }
        return backends;
    }

    /**
     * Compiles every module for each of its backends, one {@link KernelCompiler#compileAll} call per
     * backend (a backend may build them in one compiler run, and concurrent requests for the same
     * module share one build). All or nothing: on failure every module already built is closed.
     */
    private List<Map<String, KernelModule>> compileByBackend(List<ModuleSpec> modules, List<List<String>> backends) {
        List<Map<String, KernelModule>> out = new ArrayList<>();
        for (int m = 0; m < modules.size(); m++) {
            out.add(new HashMap<>());
        }
        Set<String> all = new java.util.TreeSet<>();
        backends.forEach(all::addAll);
        try {
            for (String backend : all) {
                List<Integer> which = new ArrayList<>();
                for (int m = 0; m < modules.size(); m++) {
                    if (backends.get(m).contains(backend)) {
                        which.add(m);
                    }
                }
                long t0 = System.nanoTime();
                List<KernelModule> kms;
                try {
                    kms = compilers.get(backend).compileAll(which.stream().map(m -> modules.get(m).source()).toList());
                } catch (RuntimeException e) {
                    observer.compiled(backend, System.nanoTime() - t0, false);
                    throw e;
                }
                long each = (System.nanoTime() - t0) / which.size();
                for (int j = 0; j < which.size(); j++) {
                    observer.compiled(backend, each, true);
                    out.get(which.get(j)).put(backend, kms.get(j));
                }
            }
        } catch (RuntimeException e) {
            out.forEach(map -> map.values().forEach(KernelModule::close));
            throw e;
        }
        return out;
    }

    private CompileResult register(Session s, ModuleSpec spec, List<String> backends, Map<String, KernelModule> byName,
                                   List<ModuleRef> built) {
        KernelSource src = spec.source();
        List<KernelModule> mods = new ArrayList<>();
        StringBuilder diagnostics = new StringBuilder();
        boolean cacheHit = true;
        for (String backend : backends) {
            KernelModule km = byName.get(backend);
            mods.add(km);
            cacheHit &= km.cacheHit();
            if (!km.diagnostics().isBlank()) {
                diagnostics.append(km.diagnostics());
            }
        }
        ModuleRef ref = new ModuleRef(mods, src.entryPoints().size());
        built.add(ref);
        List<CompiledKernel> kernels = new ArrayList<>();
        for (KernelSignature sig : src.entryPoints()) {
            Map<String, Kernel> byBackend = new HashMap<>();
            for (KernelModule km : mods) {
                for (Kernel k : km.kernels()) {
                    if (k.name().equals(sig.name())) {
                        byBackend.put(k.backend(), k);
                    }
                }
            }
            CompiledKernel ck = new CompiledKernel(Handles.next(), sig, byBackend, ref);
            s.kernels.put(ck.handle(), ck);
            kernels.add(ck);
        }
        return new CompileResult(kernels, diagnostics.toString(), backends, cacheHit);
    }

    private static void validateSignatures(List<KernelSignature> entries, String where) {
        if (entries.isEmpty()) {
            throw ArraydException.invalid(where + ".entry_points: none (expected: at least one)");
        }
        Set<String> names = new HashSet<>();
        for (int i = 0; i < entries.size(); i++) {
            KernelSignature sig = entries.get(i);
            String at = where + ".entry_points[" + i + "]";
            if (!IDENT.matcher(sig.name()).matches()) {
                throw ArraydException.invalid(at + ".name: \"" + sig.name() + "\" (expected: a C identifier)");
            }
            if (!names.add(sig.name())) {
                throw ArraydException.invalid(at + ".name: \"" + sig.name() + "\" (declared twice)");
            }
            Set<String> params = new HashSet<>();
            for (int p = 0; p < sig.params().size(); p++) {
                KernelParam kp = sig.params().get(p);
                if (!IDENT.matcher(kp.name()).matches()) {
                    throw ArraydException.invalid(at + ".params[" + p + "].name: \"" + kp.name() + "\" (expected: a C identifier)");
                }
                if (!params.add(kp.name())) {
                    throw ArraydException.invalid(at + ".params[" + p + "].name: \"" + kp.name() + "\" (declared twice)");
                }
            }
        }
    }

    public CompiledKernel kernel(Session s, long handle) {
        return s.kernel(handle, "");
    }

    public void destroyKernel(Session s, long handle) {
        CompiledKernel k = s.kernels.remove(handle);
        if (k == null) {
            throw ArraydException.notFound("kernel " + Handles.format(handle) + " (not found in this session)");
        }
        k.destroyed = true;
        k.module().release();
    }

    // ---------------------------------------------------------------- streams

    /** A new stream with its own native stream on {@code device} (empty = the first device). */
    public Stream createStream(Session s, String device) {
        checkSession(s);
        DeviceRuntime d = device(device);
        Stream st = new Stream(Handles.next(), d, d.device().newStream(d.id() + "-" + s.clientName()), true);
        s.streams.put(st.handle(), st);
        return st;
    }

    /** Forgets the stream now; its native stream closes once its pending work completes. */
    public void destroyStream(Session s, long handle) {
        Stream st = s.streams.remove(handle);
        if (st == null) {
            throw ArraydException.notFound("stream " + Handles.format(handle) + " (not found in this session)");
        }
        Event tail;
        synchronized (submitLock) {
            st.destroyed = true;
            tail = st.tail;
            dropMerge(st);
            dropInstances(st);
        }
        // closing joins the stream's thread, which may be the one completing `tail`: hop threads
        tail.onDone(e -> housekeeping.execute(() -> st.nativeStream().close()));
    }

    /** A stream by handle, or the session's default stream on {@code device} when the handle is 0. */
    public Stream stream(Session s, long handle, String device) {
        if (handle != 0) {
            return s.stream(handle, "");
        }
        return defaultStream(s, device(device));
    }

    static Stream defaultStream(Session s, DeviceRuntime d) {
        Stream st = s.defaultStreams.get(d.id());
        if (st != null) {
            return st;
        }
        return s.defaultStreams.computeIfAbsent(d.id(), id -> new Stream(0, d, d.nextSharedStream(), false));
    }

    // ---------------------------------------------------------------- events

    /** The event with this id in the session ({@link Event#SUCCEEDED} for one long done). */
    public Event event(Session s, long id) {
        Event e = s.events.lookup(id);
        if (e == null) {
            throw ArraydException.notFound("event " + id + " (not found in this session)");
        }
        return e;
    }

    // ---------------------------------------------------------------- submission

    /** Whether a command is expected to be short enough for the fast path (see SchedulerConfig). */
    private boolean fastPath(Prepared p) {
        if (config.fastPathNanos() == 0) {
            return false;
        }
        if (p.kernel() != null) {
            return p.kernel().cost().estimateNanos(p.size()) <= config.fastPathNanos();
        }
        return fastPathForBytes(p.size());
    }

    private boolean fastPathForBytes(long bytes) {
        return config.fastPathNanos() > 0 && bytes <= SchedulerConfig.FAST_PATH_MAX_BYTES;
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
        checkSession(s);
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
        for (int i = 0; i < prepared.length; i++) {
            try {
                prepared[i] = prepare(s, batch.get(i), merges, Prepared.once());
            } catch (ArraydException e) {
                throw new ArraydException(e.code(), "commands[" + i + "]: " + e.getMessage(), e);
            }
        }
        return enqueue(s, prepared, Replay.NONE, listener);
    }

    // The reusable Prepared a single-command submission borrows (its buffer arrays and batch of one with it), so
    // that the common submission allocates nothing before its command; null while a submission holds it (a
    // concurrent or nested one then fills one of its own). Validation stays outside the submit lock.
    private final AtomicReference<Prepared> spare = new AtomicReference<>(Prepared.reusable());

    /** {@link #submit} of one command that is not a merge copy (no merge buffers to follow through the batch). */
    private List<Event> submitOne(Session s, CommandSpec spec, EventListener listener) {
        Prepared p = spare.getAndSet(null);
        if (p == null) {
            p = Prepared.reusable();
        }
        try {
            try {
                prepare(s, spec, null, p);
            } catch (ArraydException e) {
                throw new ArraydException(e.code(), "commands[0]: " + e.getMessage(), e);
            }
            return enqueue(s, p.alone(), Replay.NONE, listener);
        } finally {
            p.clear();
            spare.set(p);
        }
    }

    // ---------------------------------------------------------------- graphs

    /**
     * Records a graph: validates its commands as {@link #submit} would (handles, shapes, argument types)
     * and keeps them for replay; nothing runs. Every command names itself with a nonzero event id, unique
     * in the graph, and may wait only on earlier commands of the graph (a replay's outside waits are given
     * when replaying).
     */
    public Graph recordGraph(Session s, List<CommandSpec> commands) {
        checkSession(s);
        if (commands.isEmpty()) {
            throw ArraydException.invalid("commands: none (expected: at least one)");
        }
        Prepared[] prepared = new Prepared[commands.size()];
        long[] ids = new long[prepared.length];
        Map<Long, Integer> index = new HashMap<>();
        Map<Stream, DType> merges = new HashMap<>(0);
        List<Buffer> used = new ArrayList<>();
        for (int i = 0; i < prepared.length; i++) {
            CommandSpec spec = commands.get(i);
            String at = "commands[" + i + "]: ";
            if (spec.event() == 0) {
                throw ArraydException.invalid(at + "event: 0 (expected: a nonzero id naming the command inside the graph)");
            }
            if (index.containsKey(spec.event())) {
                throw new ArraydException(ErrorCode.ALREADY_EXISTS, at + "event: " + spec.event() + " (used twice in this graph)");
            }
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
            Prepared p;
            try {
                p = prepare(s, spec, merges, Prepared.once());
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

    /**
     * Replays a recorded graph with the changes in {@code r}, without validating its commands again:
     * only the rebound buffers (same dtype and size, writable where the graph writes) and the new scalar
     * values (same dtype) are checked. LOCAL buffers of the graph get fresh scratch memory on every
     * replay. Returns the event of each command, in order.
     */
    public List<Event> replayGraph(Session s, long graph, GraphReplay r, EventListener listener) {
        checkSession(s);
        Graph g = s.graph(graph, "graph");
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
            Buffer to = written ? s.writableBuffer(e.getValue(), "rebind") : s.buffer(e.getValue(), "rebind");
            if (to.dtype() != from.dtype() || to.sizeBytes() != from.sizeBytes()) {
                throw ArraydException.invalid(at + to + " (expected: " + from.dtype().wireName() + " of "
                        + from.sizeBytes() + " bytes, like " + from + ")");
            }
            swap.put(from, to);
        }
        CommandTemplate[] templates = null; // only when scalars change
        if (!r.scalars().isEmpty()) {
            templates = new CommandTemplate[g.commands.length];
            for (int i = 0; i < templates.length; i++) {
                templates[i] = g.commands[i].template();
            }
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
                        + describe(g.commands[sv.command()].kernel().signature()) + ")");
            }
            if (sv.value() == null || sv.value().dtype() != params.get(sv.arg()).dtype()) {
                throw ArraydException.invalid(at + (sv.value() == null ? "unset" : sv.value().dtype().wireName() + " scalar")
                        + " (expected: " + params.get(sv.arg()).dtype().wireName() + " for parameter "
                        + params.get(sv.arg()).name() + ")");
            }
            templates[sv.command()] = launch.withScalar(sv.arg(), sv.value());
        }
        if (r.firstEvent() != 0) {
            EventTable.checkClientId(r.firstEvent(), "first_event");
            EventTable.checkClientId(r.firstEvent() + g.commands.length - 1, "first_event + " + (g.commands.length - 1));
        }
        List<Buffer> scratch = new ArrayList<>(0);
        for (Buffer b : g.buffers) {
            if (b.memoryMode() == MemoryMode.LOCAL && !swap.containsKey(b)) {
                Buffer fresh = newBuffer(s, b.dtype(), b.dims(), b.elements(), b.device(), MemoryMode.LOCAL, b.label(), true);
                scratch.add(fresh);
                swap.put(b, fresh);
            }
        }
        // the recorded commands themselves, with the replay's changes applied as they are tracked: nothing per command
        Replay replay = new Replay(r.firstEvent(), r.waits(), r.deadlineNanos(), swap.isEmpty() ? null : swap, templates);
        try {
            return enqueue(s, g.commands, replay, listener);
        } catch (RuntimeException e) {
            synchronized (submitLock) {
                for (Buffer b : scratch) {
                    if (!b.destroyed) {
                        release(b); // the replay was refused: its fresh scratch goes at once
                    }
                }
            }
            throw e;
        }
    }

    /** A recorded graph of the session. */
    public Graph graph(Session s, long handle) {
        return s.graph(handle, "graph");
    }

    /** Forgets a recorded graph (replays already submitted go on). */
    public void destroyGraph(Session s, long graph) {
        Graph g = s.graphs.remove(graph);
        if (g == null) {
            throw ArraydException.notFound("graph " + Handles.format(graph) + " (not found in this session)");
        }
        g.destroyed = true;
    }

    /** Registers, orders and starts validated commands (a batch, or a graph replay). */
    /**
     * What a graph replay changes in its recorded commands ({@link Replay#NONE} for a submission): applied
     * while they are checked and tracked, so that a replay allocates nothing per command for them.
     *
     * @param firstEvent    command {@code i} signals {@code firstEvent + i}; 0 = its spec's id (0 for a graph: assigned)
     * @param waits         what commands waiting on no other command of the graph wait for; null = their spec's waits
     * @param deadlineNanos a deadline for every command, combined with its own
     * @param swap          buffers rebound (and LOCAL scratch made fresh), or null for none
     * @param templates     per command, a template with new scalar values; null when none changed
     */
    record Replay(long firstEvent, long[] waits, long deadlineNanos, Map<Buffer, Buffer> swap,
            CommandTemplate[] templates) {

        static final Replay NONE = new Replay(0, null, CommandSpec.NO_DEADLINE, null, null);

        long id(Prepared p, int i) {
            return firstEvent != 0 ? firstEvent + i : p.spec().event();
        }

        long[] waits(Prepared p) {
            return waits != null && p.after().length == 0 ? waits : p.spec().waits();
        }

        long deadlineNanos(Prepared p) {
            return Math.min(p.spec().deadlineNanos(), deadlineNanos);
        }

        /** The command's buffers; a copy only when some are rebound. */
        Buffer[] buffers(Prepared p) {
            if (swap == null) {
                return p.buffers();
            }
            Buffer[] out = p.buffers().clone();
            for (int b = 0; b < out.length; b++) {
                if (out[b] != null) {
                    out[b] = swap.getOrDefault(out[b], out[b]);
                }
            }
            return out;
        }

        CommandTemplate template(Prepared p, int i) {
            return templates == null ? p.template() : templates[i];
        }
    }

    private List<Event> enqueue(Session s, Prepared[] prepared, Replay replay, EventListener listener) {
        // one command (the common submission) needs no arrays: its event is the list, and it has no earlier commands
        Command[] commands = prepared.length == 1 ? NO_COMMANDS : new Command[prepared.length];
        Command only = null;
        List<Command> transfers;
        synchronized (submitLock) {
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

    private static final Command[] NO_COMMANDS = new Command[0];

    // the submissions' coherence bookkeeping, reused; guarded by submitLock (see Coherence#begin)
    private final Coherence coherence;

    /**
     * Under the submit lock: registers and tracks the commands into {@code commands} (empty for a single
     * command, which is returned instead; null is returned otherwise).
     */
    private Command enqueueLocked(Session s, Prepared[] prepared, Replay replay, EventListener listener,
            Command[] commands, Coherence co) {
        if (draining) {
            throw shuttingDown();
        }
        if (s.closed) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, s + " is closed");
        }
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
            Buffer[] buffers = replay.buffers(p);
            Command c = track(s, p, i, replay, buffers, e, co, commands);
            if (commands.length == 0) {
                only = c;
            } else {
                commands[i] = c;
            }
            if (listener != null) {
                e.onDone(listener);
            }
            for (Buffer b : buffers) {
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
                release(b);
            }
        }
        return only;
    }

    // event ids of the batch being checked (a set: the values are TRUE); guarded by submitLock, empty between batches
    private final LongMap<Boolean> batchIds = new LongMap<>(64);

    /** The first pass of a submission: everything that can fail, before anything changes. Under the submit lock. */
    private void checkBatch(Session s, Prepared[] prepared, Replay replay, LongMap<Boolean> inBatch) {
        Set<Buffer> constantsRead = null; // HOSTED_CONSTANT buffers read by an earlier command of the batch
        for (int i = 0; i < prepared.length; i++) {
            Prepared p = prepared[i];
            try {
                long id = replay.id(p, i);
                Buffer[] buffers = replay.buffers(p);
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
                for (int b = 0; b < buffers.length; b++) {
                    Buffer buf = buffers[b];
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
                for (int b = 0; b < buffers.length; b++) {
                    Buffer buf = buffers[b];
                    if (buf != null && p.reads()[b] && buf.memoryMode() == MemoryMode.HOSTED_CONSTANT) {
                        if (constantsRead == null) {
                            constantsRead = new HashSet<>();
                        }
                        constantsRead.add(buf);
                    }
                }
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

    /** Exact-size arrays for track()'s replicas and memory of commands with fewer buffers than this. */
    private static final int SCRATCH = 8;
    // guarded by submitLock; entries are overwritten by each command (stale ones only keep replicas alive, which their buffers do anyway)
    private final Replica[][] repsScratch = new Replica[SCRATCH][];
    private final MemRef[][] refsScratch = new MemRef[SCRATCH][];

    {
        for (int n = 0; n < SCRATCH; n++) {
            repsScratch[n] = new Replica[n];
            refsScratch[n] = new MemRef[n];
        }
    }

    /** Under the submit lock: builds one command, its transfers and its edges. */
    private Command track(Session s, Prepared p, int index, Replay replay, Buffer[] buffers, Event e, Coherence co,
            Command[] earlier) {
        Stream st = p.stream();
        DeviceRuntime d = st.device();
        Buffer[] shared = buffers; // the Prepared's (a graph's, perhaps): copied before anything in it changes
        CommandTemplate template = replay.template(p, index);
        if (p.placeAmong() != null) {
            CommandTemplate.Launch l = (CommandTemplate.Launch) template;
            DeviceRuntime placed = place(p.kernel(), buffers, p.size(), p.placeAmong(), l.globalDims(), l.localDims());
            if (placed != d) {
                d = placed;
                st = defaultStream(s, d);
                template = ((CommandTemplate.Launch) template).on(p.kernel().forBackend(d.backend()));
            }
        }
        ArraydException refused = null;
        Replica[] reps = null;
        MemRef[] refs;
        Coherence.Leg leg = null;
        boolean perStream = false;
        for (Buffer b : buffers) {
            perStream |= b != null && b.perStream;
        }
        Buffer newMerge = null; // what a merge copy puts in the stream's merge buffer, installed once it is tracked
        boolean newMergeInPlace = false;
        Object result = null;
        DeviceCommand op = null;
        try {
            if (perStream) {
                // each stream its own instance; a copy may read another stream's (its src_stream)
                buffers = buffers.clone();
                long srcStream = p.spec().op() instanceof CommandSpec.CopyOp cp ? cp.srcStream() : 0;
                for (int b = 0; b < buffers.length; b++) {
                    if (buffers[b] != null && buffers[b].perStream) {
                        Stream of = b == 0 && srcStream != 0 ? s.stream(srcStream, "copy.src_stream") : st;
                        buffers[b] = instanceOf(s, buffers[b], of, co);
                    }
                }
            }
            List<Replica> pinned = co.pinnedForNextCommand();
            if (template instanceof CommandTemplate.MergeCopy mc) {
                Buffer src = buffers[0];
                Replica here = src.replicas[d.index()];
                if (mc.mode() == MergeMode.STREAMING && here != null && here.valid()) {
                    // the consumer reads the source in place: nothing to copy
                    newMerge = src;
                    newMergeInPlace = true;
                    template = new CommandTemplate.Prefetch();
                } else {
                    Buffer merge = st.merge;
                    if (merge == null || st.mergeInPlace || merge.dtype() != src.dtype()
                            || merge.sizeBytes() != src.sizeBytes()) {
                        merge = new Buffer(Handles.next(), src.dtype(), src.dims(), src.elements(), d, deviceList.size(),
                                MemoryMode.DEVICE, "merge buffer of " + st, true);
                    }
                    newMerge = merge;
                    buffers = new Buffer[] {src, merge};
                    template = new CommandTemplate.Copy(0, 0, src.sizeBytes());
                }
            }
            boolean[] reads = p.reads();
            boolean[] writes = p.writes();
            boolean[] whole = p.whole();
            if (buffers.length > reads.length) { // a merge copy became [src, merge]: it writes all of the merge buffer
                reads = new boolean[] {true, false};
                writes = new boolean[] {false, true};
                whole = new boolean[] {false, true};
            }
            for (int b = 0; b < buffers.length; b++) {
                if (buffers[b] == null) {
                    if (buffers == shared) {
                        buffers = buffers.clone();
                    }
                    Buffer merge = st.merge;
                    if (merge == null || merge.dtype() != p.mergeDtype() || merge.destroyed) {
                        throw new ArraydException(ErrorCode.FAILED_PRECONDITION, "launch: the merge buffer of " + st
                                + (merge == null ? " is empty (expected: a merge copy on this stream first)"
                                : " holds " + merge.dtype().wireName() + " (expected: " + p.mergeDtype().wireName() + ")"));
                    }
                    buffers[b] = merge;
                }
            }
            reps = buffers.length < SCRATCH ? repsScratch[buffers.length] : new Replica[buffers.length];
            refs = buffers.length < SCRATCH ? refsScratch[buffers.length] : new MemRef[buffers.length];
            boolean remoteCopy = template instanceof CommandTemplate.Copy && buffers.length == 2
                    && !validOn(buffers[0], d);
            for (int b = 0; b < buffers.length; b++) {
                if (remoteCopy && b == 0) {
                    reps[b] = null;
                    refs[b] = null;
                    continue; // read where it is current, straight into the destination
                }
                boolean needData = reads[b] || (writes[b] && !whole[b]);
                reps[b] = co.prepare(buffers[b], st, needData, pinned);
                refs[b] = reps[b].data(0, buffers[b].sizeBytes());
            }
            if (remoteCopy) {
                CommandTemplate.Copy cp = (CommandTemplate.Copy) template;
                leg = co.leg(buffers[0], d, cp.srcOffset(), cp.size(),
                        CommandTemplate.slice(refs[1], cp.dstOffset(), cp.size()), null);
                op = leg.op();
            } else if (template instanceof CommandTemplate.Launch launch) {
                DeviceCommand.Launch last = p.kernel().lastLaunch(d.index());
                DeviceCommand.Launch built = launch.op(refs, last);
                if (built != last) {
                    p.kernel().lastLaunch(d.index(), built);
                }
                op = built;
            } else {
                CommandTemplate.Built built = template.build(refs);
                op = built.op();
                result = built.result();
            }
            if (p.kernel() != null) {
                p.kernel().module().retain(); // released when the command ends
            }
            Priority priority = p.spec().priority() != null ? p.spec().priority() : s.priority();
            Command c = new Command(e, s, st, op, result, p.kernel(), op != null && fastPath(p), p.size(), priority,
                    replay.deadlineNanos(p));
            if (p.kernel() != null) {
                if (deviceList.size() > 1) {
                    double est = estimateNanos(p.kernel(), d, p.size());
                    if (est > 0) {
                        c.expectedNanos = (long) est;
                        d.backlogAdded(c.expectedNanos);
                    }
                }
            }
            for (long w : replay.waits(p)) {
                c.dependOnData(s.events.lookup(w));
            }
            for (int i : p.after()) {
                c.dependOnData(earlier[i].event());
            }
            c.dependOnOrder(st.tail);
            st.tail = e;
            if (leg != null) {
                leg.attach(c);
            }
            for (int b = 0; b < buffers.length; b++) {
                if (reads[b] && buffers[b].memoryMode() == MemoryMode.HOSTED_CONSTANT) {
                    buffers[b].frozen = true; // read once: read-only from now on
                }
                if (reps[b] != null) {
                    Coherence.access(c, reps[b], reads[b], writes[b]);
                    if (writes[b]) {
                        afterWrite(buffers[b], reps[b], template, co);
                    }
                }
            }
            if (newMerge != null && newMerge != st.merge) {
                dropMerge(st);
                st.merge = newMerge;
            }
            if (newMerge != null) {
                st.mergeInPlace = newMergeInPlace;
            }
            return c;
        } catch (ArraydException ex) {
            // RESOURCE_EXHAUSTED (nothing left to evict) or FAILED_PRECONDITION (a merge buffer that does not
            // fit) in practice; whatever it is, only this command fails: the batch is half registered already
            refused = ex;
            if (p.template() instanceof CommandTemplate.MergeCopy) {
                if (newMerge != null && newMerge != st.merge && !newMergeInPlace) {
                    release(newMerge); // a merge buffer that was never installed
                }
                // the stream's merge buffer no longer holds what its launches expect: empty it, so that they fail
                dropMerge(st);
            }
        }
        // Refused: the command fails, after its stream predecessor and its waits, without touching its buffers.
        Command c = new Command(e, s, st, null, null, null, false, 0,
                p.spec().priority() != null ? p.spec().priority() : s.priority(), CommandSpec.NO_DEADLINE);
        for (long w : replay.waits(p)) {
            c.dependOnData(s.events.lookup(w));
        }
        for (int i : p.after()) {
            c.dependOnData(earlier[i].event());
        }
        c.dependOnOrder(st.tail);
        st.tail = e;
        c.cancel(refused);
        return c;
    }

    private static boolean validOn(Buffer b, DeviceRuntime d) {
        Replica r = b.replicas[d.index()];
        return r != null && r.valid();
    }

    /** Memory-mode duties after a command writes {@code r} (the write is already recorded). */
    private void afterWrite(Buffer b, Replica r, CommandTemplate template, Coherence co) {
        switch (b.memoryMode()) {
            case HOSTED_CONSTANT -> co.refreshHost(r); // kept on the host: replicas come and go without write-back
            case HOSTED_VOLATILE -> {
                if (template instanceof CommandTemplate.Upload u && u.offset() == 0
                        && u.data().byteSize() == b.sizeBytes()) {
                    Coherence.replaceHost(b, u.data());
                    Coherence.normalize(b);
                }
            }
            default -> {
            }
        }
    }

    /** Frees the per-stream instances made for a stream (its buffers lose that instance). Under the submit lock. */
    private static void dropInstances(Stream st) {
        if (st.instances == null) {
            return;
        }
        for (Buffer inst : st.instances) {
            if (inst.parent.instances != null) {
                inst.parent.instances.remove(st);
            }
            release(inst);
        }
        st.instances = null;
    }

    /**
     * The instance of per-stream buffer {@code b} for stream {@code st}, made (zeroed, its bytes charged to
     * the session's quota) on first use. Under the submit lock.
     */
    private Buffer instanceOf(Session s, Buffer b, Stream st, Coherence co) {
        if (b.instances != null) {
            Buffer inst = b.instances.get(st);
            if (inst != null) {
                return inst;
            }
        }
        if (b.destroyed) {
            throw ArraydException.notFound("buffer " + Handles.format(b.handle()) + " (destroyed)");
        }
        if (st.destroyed) {
            throw ArraydException.notFound(st + " (destroyed)");
        }
        DeviceRuntime d = st.device();
        if (!d.info().dtypes().contains(b.dtype())) {
            throw ArraydException.invalid(b + " (its dtype is not supported by " + d.id() + ", the device of " + st + ")");
        }
        MemoryCharge charge = s.memoryCharge();
        charge.reserve(b.sizeBytes());
        Buffer inst = new Buffer(Handles.next(), b.dtype(), b.dims(), b.elements(), d, deviceList.size(), MemoryMode.DEVICE,
                (b.label().isEmpty() ? Handles.format(b.handle()) : b.label()) + " of " + st, true);
        inst.parent = b;
        inst.charge = charge;
        try {
            initReplica(s, inst, d, co);
        } catch (RuntimeException e) {
            release(inst);
            throw e;
        }
        if (b.instances == null) {
            b.instances = new java.util.IdentityHashMap<>(4);
        }
        b.instances.put(st, inst);
        if (st.instances == null) {
            st.instances = new ArrayList<>(2);
        }
        st.instances.add(inst);
        return inst;
    }

    /** Frees a stream's own merge buffer (not a streaming alias of a client's buffer). Under the submit lock. */
    private static void dropMerge(Stream st) {
        if (st.merge != null && !st.mergeInPlace) {
            release(st.merge);
        }
        st.merge = null;
        st.mergeInPlace = false;
    }

    /** Validates {@code spec} into {@code into} (returned). */
    private Prepared prepare(Session s, CommandSpec spec, Map<Stream, DType> merges, Prepared into) {
        return switch (spec.op()) {
            case CommandSpec.LaunchOp l -> prepareLaunch(s, spec, l, merges, into);
            case CommandSpec.CopyOp c -> prepareCopy(s, spec, c, merges, into);
            case CommandSpec.FillOp f -> prepareFill(s, spec, f, into);
            case CommandSpec.UploadOp u -> prepareUpload(s, spec, u, into);
            case CommandSpec.DownloadOp d -> prepareDownload(s, spec, d, into);
        };
    }

    private Prepared prepareLaunch(Session s, CommandSpec spec, CommandSpec.LaunchOp l, Map<Stream, DType> merges,
            Prepared into) {
        CompiledKernel k = s.kernel(l.kernel(), "launch.kernel");
        KernelSignature sig = k.signature();
        List<KernelParam> params = sig.params();
        List<CommandSpec.Arg> args = l.args() == null ? List.of() : l.args();
        if (args.size() != params.size()) {
            throw ArraydException.invalid("launch.args: " + args.size() + " given (expected: " + params.size()
                    + " for kernel " + describe(sig) + ")");
        }
        Buffer[] argBuffers = into.bufferArray(args.size());
        boolean usesMerge = false;
        for (int i = 0; i < args.size(); i++) {
            if (args.get(i) instanceof CommandSpec.BufferArg ba) {
                Buffer b = s.buffers.get(ba.buffer());
                argBuffers[i] = b != null ? b : s.buffer(ba.buffer(), "launch.args[" + i + "]");
            } else if (args.get(i) instanceof CommandSpec.MergeArg) {
                usesMerge = true;
            }
        }
        DeviceRuntime d;
        Stream stream;
        boolean placed = false;
        if (spec.stream() != 0) {
            stream = s.stream(spec.stream(), "stream");
            d = stream.device();
            if (l.device() != null && !l.device().isEmpty() && !device(l.device()).equals(d)) {
                throw ArraydException.invalid("launch.device: \"" + l.device() + "\" (expected: " + d.id()
                        + ", the device of " + stream + ")");
            }
        } else {
            if (l.device() != null && !l.device().isEmpty()) {
                d = device(l.device());
            } else if (usesMerge) {
                throw ArraydException.invalid("launch: reads a merge buffer but names no stream or device (expected: "
                        + "the stream or device of the merge copy)");
            } else {
                // validated against one device it fits; placed for real when tracked (see track)
                d = tentativeDevice(k, argBuffers, l.globalDims(), l.localDims());
                placed = deviceList.size() > 1;
            }
            stream = defaultStream(s, d);
        }
        Kernel native_ = k.forBackend(d.backend());
        if (native_ == null) {
            throw ArraydException.invalid("launch.kernel: " + k.name() + " is compiled for " + k.backends()
                    + ", not for " + d.id() + "'s backend " + d.backend());
        }
        DeviceInfo info = d.info();
        long[] global = l.globalDims();
        if (global == null || global.length == 0 || global.length > Math.min(3, info.maxGridDims())) {
            throw ArraydException.invalid("launch.global_dims: " + Arrays.toString(global) + " (expected: 1 to "
                    + Math.min(3, info.maxGridDims()) + " dims)");
        }
        long items = 1;
        for (int i = 0; i < global.length; i++) {
            if (global[i] <= 0) {
                throw ArraydException.invalid("launch.global_dims[" + i + "]: " + Long.toUnsignedString(global[i])
                        + " (expected: > 0)");
            }
            items = multiplyOrMax(items, global[i]);
        }
        if (items > config.maxGridItems()) {
            throw ArraydException.invalid("launch.global_dims: " + Arrays.toString(global) + " (expected: at most "
                    + config.maxGridItems() + " work-items in all)");
        }
        long[] local = l.localDims();
        if (local != null && local.length == 0) {
            local = null;
        }
        if (local != null) {
            if (local.length != global.length) {
                throw ArraydException.invalid("launch.local_dims: " + Arrays.toString(local) + " (expected: "
                        + global.length + " dims like global_dims)");
            }
            long groupItems = 1;
            for (int i = 0; i < local.length; i++) {
                if (local[i] <= 0 || global[i] % local[i] != 0) {
                    throw ArraydException.invalid("launch.local_dims[" + i + "]: " + Long.toUnsignedString(local[i])
                            + " (expected: > 0 and dividing global_dims[" + i + "] = " + global[i] + ")");
                }
                groupItems = multiplyOrMax(groupItems, local[i]);
            }
            if (groupItems > info.maxWorkGroupSize()) {
                throw ArraydException.invalid("launch.local_dims: " + Arrays.toString(local) + " (expected: at most "
                        + info.maxWorkGroupSize() + " work-items per group on " + d.id() + ")");
            }
        }
        // the last launch template of this kernel: while the arguments match it, it is shared (templates are immutable)
        CommandTemplate.Launch last = k.lastTemplate;
        Object[] lastArgs = last != null && last.kernel() == native_ && last.args().length == args.size() ? last.args() : null;
        Object[] targs = lastArgs != null ? lastArgs : new Object[args.size()];
        // The buffers it touches, each once, and how: compacted into argBuffers in place (entry nTouched is
        // written only after entry i >= nTouched was read); accesses as bit masks while there can be at most
        // 64 (then the shared arrays of Flags). This runs for every launch.
        Buffer[] touched = argBuffers;
        long readMask = 0;
        long writeMask = 0;
        boolean[] manyReads = args.size() > Long.SIZE ? new boolean[args.size()] : null;
        boolean[] manyWrites = manyReads != null ? new boolean[args.size()] : null;
        int nTouched = 0;
        DType mergeDtype = null;
        for (int i = 0; i < args.size(); i++) {
            KernelParam p = params.get(i);
            CommandSpec.Arg a = args.get(i);
            // (error messages name "launch.args[i]: ", built only when thrown)
            if (p.isBuffer()) {
                if (a instanceof CommandSpec.MergeArg) {
                    if (p.access() != Access.READ) {
                        throw ArraydException.invalid(argAt(i) + "the merge buffer (expected: a READ parameter; parameter "
                                + p.name() + " is " + p.access() + ")");
                    }
                    DType have = merges != null && merges.containsKey(stream) ? merges.get(stream)
                            : stream.merge == null ? null : stream.merge.dtype();
                    if (have == null) {
                        throw new ArraydException(ErrorCode.FAILED_PRECONDITION, argAt(i) + "the merge buffer of " + stream
                                + " is empty (expected: a merge copy on this stream first)");
                    }
                    if (have != p.dtype()) {
                        throw ArraydException.invalid(argAt(i) + "the merge buffer of " + stream + " holds " + have.wireName()
                                + " (expected: " + p.dtype().wireName() + " for parameter " + p.name() + ")");
                    }
                    mergeDtype = have;
                    int seen = indexOf(touched, nTouched, null);
                    if (seen < 0) {
                        touched[nTouched] = null;
                        seen = nTouched++;
                    }
                    if (manyReads == null) {
                        readMask |= 1L << seen;
                    } else {
                        manyReads[seen] = true;
                    }
                    targs = arg(targs, lastArgs, i, seen);
                    continue;
                }
                if (!(a instanceof CommandSpec.BufferArg)) {
                    throw ArraydException.invalid(argAt(i) + describeArg(a) + " (expected: buffer of " + p.dtype().wireName()
                            + " for parameter " + p.name() + ")");
                }
                Buffer b = argBuffers[i];
                if (b.dtype() != p.dtype()) {
                    throw ArraydException.invalid(argAt(i) + b + " (expected: buffer of " + p.dtype().wireName()
                            + " for parameter " + p.name() + ")");
                }
                if (!info.dtypes().contains(b.dtype())) {
                    throw ArraydException.invalid(argAt(i) + b + " (its dtype is not supported by " + d.id() + ")");
                }
                if (p.access().writes()) {
                    if (s.isReadOnly(b.handle())) {
                        s.writableBuffer(b.handle(), "launch.args[" + i + "]"); // throws PERMISSION_DENIED
                    }
                }
                int seen = indexOf(touched, nTouched, b);
                if (seen < 0) {
                    touched[nTouched] = b;
                    seen = nTouched++;
                }
                // a buffer passed twice is accessed as the union of both
                if (manyReads == null) {
                    readMask |= p.access().reads() ? 1L << seen : 0;
                    writeMask |= p.access().writes() ? 1L << seen : 0;
                } else {
                    manyReads[seen] |= p.access().reads();
                    manyWrites[seen] |= p.access().writes();
                }
                targs = arg(targs, lastArgs, i, seen);
            } else {
                if (!(a instanceof CommandSpec.ScalarArg sa) || sa.value() == null) {
                    throw ArraydException.invalid(argAt(i) + describeArg(a) + " (expected: " + p.dtype().wireName()
                            + " scalar for parameter " + p.name() + ")");
                }
                if (sa.value().dtype() != p.dtype()) {
                    throw ArraydException.invalid(argAt(i) + sa.value().dtype().wireName() + " scalar (expected: "
                            + p.dtype().wireName() + " scalar for parameter " + p.name() + ")");
                }
                targs = arg(targs, lastArgs, i, sa.value());
            }
        }
        Buffer[] buffers = touched;
        if (nTouched < touched.length) {
            buffers = into.bufferArray(nTouched);
            System.arraycopy(touched, 0, buffers, 0, nTouched);
        }
        CommandTemplate.Launch t;
        if (targs == lastArgs && Arrays.equals(last.globalDims(), global)
                && Arrays.equals(last.localDims(), local)) {
            t = last; // the same launch as last time: no new template, arguments or dims
        } else {
            t = new CommandTemplate.Launch(native_, global.clone(), local == null ? null : local.clone(), targs);
            k.lastTemplate = t;
        }
        // a kernel may leave elements it does not write alone: no write of a launch covers "all of it".
        // Placed again when tracked, with the queues as the earlier commands of its batch left them.
        boolean[] reads = manyReads == null ? Flags.of(readMask, nTouched) : Arrays.copyOf(manyReads, nTouched);
        boolean[] writes = manyWrites == null ? Flags.of(writeMask, nTouched) : Arrays.copyOf(manyWrites, nTouched);
        return into.set(spec, stream, t, buffers, reads, writes, Flags.none(nTouched), k, items, mergeDtype,
                Prepared.NO_INDEXES, placed ? deviceList : null);
    }

    /**
     * Sets launch argument {@code i} to {@code v}: {@code targs} stays the last template's array while every
     * argument so far equals it, and becomes a copy at the first that differs.
     */
    private static Object[] arg(Object[] targs, Object[] lastArgs, int i, Object v) {
        if (targs == lastArgs) {
            if (targs[i].equals(v)) {
                return targs;
            }
            targs = lastArgs.clone();
        }
        targs[i] = v;
        return targs;
    }

    private static String argAt(int i) {
        return "launch.args[" + i + "]: ";
    }

    /** Position of {@code b} among the first {@code n} entries (by identity; null finds the merge buffer's slot). */
    private static int indexOf(Buffer[] a, int n, Buffer b) {
        for (int i = 0; i < n; i++) {
            if (a[i] == b) {
                return i;
            }
        }
        return -1;
    }

    /** Whether a launch validated for one device would also be valid on {@code d} (placement's candidates). */
    private static boolean fits(CompiledKernel k, DeviceRuntime d, long[] global, long[] local, Buffer[] buffers) {
        DeviceInfo info = d.info();
        if (k.forBackend(d.backend()) == null || global.length > Math.min(3, info.maxGridDims())) {
            return false;
        }
        if (local != null) {
            long groupItems = 1;
            for (long x : local) {
                groupItems = multiplyOrMax(groupItems, x);
            }
            if (groupItems > info.maxWorkGroupSize()) {
                return false;
            }
        }
        for (Buffer b : buffers) {
            if (b != null && !info.dtypes().contains(b.dtype())) {
                return false;
            }
        }
        return true;
    }

    /**
     * Placement of a launch that names no device and no stream: among the devices the kernel is compiled
     * for, the one where it is expected to finish first — queued work there, plus moving the arguments
     * that are not current there, plus the kernel's own time from its history on that device (a device
     * with no history yet counts as free, so that it gets measured).
     */
    /**
     * The device a launch to be placed is validated against: where its first buffer argument is current if
     * the launch fits there, else the first device it fits, else that preferred device (whose validation
     * then says what is wrong). No estimates: {@link #place} decides when the launch is tracked.
     */
    private DeviceRuntime tentativeDevice(CompiledKernel k, Buffer[] args, long[] global, long[] local) {
        DeviceRuntime preferred = preferredDevice(args);
        if (deviceList.size() == 1 || global == null || (local != null && local.length != global.length)) {
            return preferred;
        }
        long[] group = local != null && local.length == 0 ? null : local;
        if (fits(k, preferred, global, group, args)) {
            return preferred;
        }
        for (int i = 0; i < deviceList.size(); i++) {
            if (fits(k, deviceList.get(i), global, group, args)) {
                return deviceList.get(i);
            }
        }
        return preferred;
    }

    /** Where the first buffer argument is current; the first device when there is none. */
    private DeviceRuntime preferredDevice(Buffer[] args) {
        for (Buffer b : args) {
            if (b != null) {
                return b.preferredDevice();
            }
        }
        return deviceList.getFirst();
    }

    /**
     * Where a launch goes, among the devices of {@code among} that it fits ({@link #fits}): see the class
     * comment of {@link Coherence} for transfer costs and {@link KernelHistory} for execution times.
     */
    private DeviceRuntime place(CompiledKernel k, Buffer[] args, long items, List<DeviceRuntime> among, long[] global,
            long[] local) {
        DeviceRuntime fallback = preferredDevice(args);
        DeviceRuntime best = null;
        double bestFinish = Double.MAX_VALUE;
        for (int di = 0; di < among.size(); di++) {
            DeviceRuntime d = among.get(di);
            if (!fits(k, d, global, local, args)) {
                continue;
            }
            double finish = d.backlogNanos();
            for (Buffer b : args) {
                if (b != null) {
                    finish += Coherence.transferNanos(b, d); // writes too: a kernel may leave elements alone
                }
            }
            double exec = estimateNanos(k, d, items);
            if (!Double.isNaN(exec)) {
                finish += exec;
            }
            if (finish < bestFinish || (finish == bestFinish && d == fallback)) {
                best = d;
                bestFinish = finish;
            }
        }
        return best != null ? best : fallback;
    }

    /**
     * Expected nanoseconds of {@code items} work-items of {@code k} on {@code d}: its history there, or,
     * before it has one, the least of its other devices' (so that work queued on a device not measured
     * yet still counts); when it never ran anywhere, the device's average command time. Without that
     * last guess a kernel's first launches would all add nothing to any device's queued work and all go
     * to the same device (where the data is): a burst of new, independent tasks would run on one device
     * while the others idle until the first results came back (StarPU calibrates by spreading
     * uncalibrated tasks likewise).
     */
    private double estimateNanos(CompiledKernel k, DeviceRuntime d, long items) {
        double est = k.history(d.index()).estimateNanos(items);
        if (!Double.isNaN(est)) {
            return est;
        }
        for (int i = 0; i < deviceList.size(); i++) {
            DeviceRuntime o = deviceList.get(i);
            if (o != d) {
                double e = k.history(o.index()).estimateNanos(items);
                if (!Double.isNaN(e) && (Double.isNaN(est) || e < est)) {
                    est = e;
                }
            }
        }
        return Double.isNaN(est) ? d.averageCommandNanos() : est;
    }

    private Prepared prepareCopy(Session s, CommandSpec spec, CommandSpec.CopyOp c, Map<Stream, DType> merges,
            Prepared into) {
        Buffer src = s.buffer(c.src(), "copy.src");
        if (c.srcStream() != 0) {
            if (!src.perStream) {
                throw ArraydException.invalid("copy.src_stream: " + Handles.format(c.srcStream()) + " (expected: 0; "
                        + src + " is not PER_STREAM, so it has no per-stream instances to choose from)");
            }
            s.stream(c.srcStream(), "copy.src_stream");
        }
        if (c.dst() == 0) {
            DeviceRuntime d;
            Stream stream;
            if (spec.stream() != 0) {
                stream = s.stream(spec.stream(), "stream");
                d = stream.device();
                if (!c.device().isEmpty() && !device(c.device()).equals(d)) {
                    throw ArraydException.invalid("copy.device: \"" + c.device() + "\" (expected: " + d.id()
                            + ", the device of " + stream + ")");
                }
            } else {
                if (c.device().isEmpty()) {
                    throw ArraydException.invalid("copy: no dst, no device and no stream (expected: a dst buffer, or "
                            + "the device or stream to transfer to)");
                }
                d = device(c.device());
                stream = defaultStream(s, d);
            }
            if (!d.info().dtypes().contains(src.dtype())) {
                throw ArraydException.invalid("copy.src: " + src + " (its dtype is not supported by " + d.id() + ")");
            }
            if (c.merge() == MergeMode.NONE) {
                return into.set(spec, stream, new CommandTemplate.Prefetch(), new Buffer[] {src},
                        new boolean[] {true}, new boolean[] {false}, new boolean[1], null, src.sizeBytes(), null);
            }
            merges.put(stream, src.dtype());
            return into.set(spec, stream, new CommandTemplate.MergeCopy(c.merge()), new Buffer[] {src},
                    new boolean[] {true}, new boolean[] {false}, new boolean[1], null, src.sizeBytes(), null);
        }
        if (c.merge() != MergeMode.NONE) {
            throw ArraydException.invalid("copy.merge: " + c.merge() + " with a dst buffer (expected: no dst; a merge "
                    + "copy fills the merge buffer of its stream)");
        }
        Buffer dst = s.writableBuffer(c.dst(), "copy.dst");
        long size = c.sizeBytes() == 0 ? src.sizeBytes() - Math.min(c.srcOffsetBytes(), src.sizeBytes()) : c.sizeBytes();
        checkRange("copy.src", src, c.srcOffsetBytes(), size);
        checkRange("copy.dst", dst, c.dstOffsetBytes(), size);
        if (src == dst && c.srcOffsetBytes() < c.dstOffsetBytes() + size && c.dstOffsetBytes() < c.srcOffsetBytes() + size) {
            throw ArraydException.invalid("copy: ranges [" + c.srcOffsetBytes() + ", +" + size + ") and ["
                    + c.dstOffsetBytes() + ", +" + size + ") of " + src + " overlap");
        }
        Stream stream = streamOn(s, spec, c.device().isEmpty() ? null : device(c.device()), dst, "copy");
        CommandTemplate t = new CommandTemplate.Copy(c.srcOffsetBytes(), c.dstOffsetBytes(), size);
        if (src == dst) {
            return into.set(spec, stream, t, new Buffer[] {src}, new boolean[] {true}, new boolean[] {true},
                    new boolean[1], null, size, null);
        }
        boolean whole = c.dstOffsetBytes() == 0 && size == dst.sizeBytes();
        return into.set(spec, stream, t, new Buffer[] {src, dst}, new boolean[] {true, false},
                new boolean[] {false, true}, new boolean[] {false, whole}, null, size, null);
    }

    private Prepared prepareFill(Session s, CommandSpec spec, CommandSpec.FillOp f, Prepared into) {
        Buffer b = s.writableBuffer(f.buffer(), "fill.buffer");
        if (f.value() == null) {
            throw ArraydException.invalid("fill.value: unset (expected: " + b.dtype().wireName() + " scalar)");
        }
        long count = f.countElements() == 0 ? b.elements() - Math.min(f.offsetElements(), b.elements()) : f.countElements();
        if (f.offsetElements() < 0 || count < 0 || f.offsetElements() > b.elements() - count) {
            throw new ArraydException(ErrorCode.OUT_OF_RANGE, "fill: elements [" + f.offsetElements() + ", +" + count
                    + ") (expected: within the " + b.elements() + " elements of " + b + ")");
        }
        long pattern = fillPattern(b.dtype(), f.value());
        int width = b.dtype().byteSize();
        Stream stream = streamOn(s, spec, null, b, "fill");
        CommandTemplate t = new CommandTemplate.Fill(f.offsetElements() * width, count * width, pattern, width);
        return into.set(spec, stream, t, new Buffer[] {b}, new boolean[] {false}, new boolean[] {true},
                new boolean[] {count == b.elements()}, null, count * width, null);
    }

    private Prepared prepareUpload(Session s, CommandSpec spec, CommandSpec.UploadOp u, Prepared into) {
        Buffer b = s.writableBuffer(u.buffer(), "upload.buffer");
        MemorySegment data = u.data();
        int width = b.dtype().byteSize();
        if (u.offsetBytes() % width != 0 || data.byteSize() % width != 0) {
            throw ArraydException.invalid("upload: " + data.byteSize() + " bytes at offset " + u.offsetBytes()
                    + " (expected: whole " + b.dtype().wireName() + " elements, multiples of " + width + " bytes, for " + b + ")");
        }
        checkRange("upload", b, u.offsetBytes(), data.byteSize());
        Stream stream = streamOn(s, spec, null, b, "upload");
        return into.set(spec, stream, new CommandTemplate.Upload(data, u.offsetBytes()), new Buffer[] {b},
                new boolean[] {false}, new boolean[] {true}, new boolean[] {u.offsetBytes() == 0 && data.byteSize() == b.sizeBytes()},
                null, data.byteSize(), null);
    }

    private Prepared prepareDownload(Session s, CommandSpec spec, CommandSpec.DownloadOp d, Prepared into) {
        Buffer b = s.buffer(d.buffer(), "download.buffer");
        long size = d.sizeBytes() == 0 ? b.sizeBytes() - Math.min(d.offsetBytes(), b.sizeBytes()) : d.sizeBytes();
        checkRange("download", b, d.offsetBytes(), size);
        if (size > d.maxBytes()) {
            throw ArraydException.invalid("download: " + size + " bytes of " + b + " (expected: at most " + d.maxBytes()
                    + " in one command; read larger ranges with BufferService.ReadBuffer)");
        }
        if (size > Integer.MAX_VALUE - 16) {
            throw ArraydException.invalid("download.size_bytes: " + size + " (expected: < 2 GiB per command)");
        }
        Stream stream = streamOn(s, spec, null, b, "download");
        return into.set(spec, stream, new CommandTemplate.Download(d.offsetBytes(), size), new Buffer[] {b},
                new boolean[] {true}, new boolean[] {false}, new boolean[1], null, size, null);
    }

    /**
     * The stream a data command runs on: the one it names (any device: its buffers are made current
     * there), else the default stream on {@code device}, else on the buffer's preferred device (where its
     * data is current).
     */
    private Stream streamOn(Session s, CommandSpec spec, DeviceRuntime device, Buffer b, String what) {
        if (spec.stream() == 0) {
            return defaultStream(s, device != null ? device : b.preferredDevice());
        }
        Stream st = s.stream(spec.stream(), "stream");
        if (device != null && !st.device().equals(device)) {
            throw ArraydException.invalid(what + ".device: \"" + device.id() + "\" (expected: " + st.device().id()
                    + ", the device of " + st + ")");
        }
        if (!st.device().info().dtypes().contains(b.dtype())) {
            throw ArraydException.invalid("stream: " + st + " (" + b + "'s dtype is not supported there)");
        }
        return st;
    }

    private static void checkRange(String what, Buffer b, long offset, long size) {
        if (offset < 0 || size < 0 || offset > b.sizeBytes() - size) {
            throw new ArraydException(ErrorCode.OUT_OF_RANGE, what + ": bytes [" + Long.toUnsignedString(offset) + ", +"
                    + Long.toUnsignedString(size) + ") (expected: within the " + b.sizeBytes() + " bytes of " + b + ")");
        }
    }

    static long fillPattern(DType target, KernelArg.Scalar v) {
        DType given = v.dtype();
        boolean halfFromF32 = (target == DType.F16 || target == DType.BF16) && given == DType.F32;
        if (given != target && !halfFromF32) {
            throw ArraydException.invalid("fill.value: " + given.wireName() + " scalar (expected: "
                    + (target == DType.F16 || target == DType.BF16 ? "f32" : target.wireName()) + " for a buffer of "
                    + target.wireName() + ")");
        }
        return switch (target) {
            case F16 -> Float.floatToFloat16(Float.intBitsToFloat((int) v.bits())) & 0xffffL;
            case BF16 -> bf16Bits(Float.intBitsToFloat((int) v.bits()));
            case F32, I32 -> v.bits() & 0xffff_ffffL;
            case U8 -> v.bits() & 0xffL;
            case F64, I64 -> v.bits();
        };
    }

    /** f32 to bfloat16, rounding to nearest even; NaN stays NaN. */
    static long bf16Bits(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) {
            return ((bits >>> 16) | 0x40) & 0xffffL;
        }
        int rounded = bits + 0x7fff + ((bits >>> 16) & 1);
        return (rounded >>> 16) & 0xffffL;
    }

    private long elementCount(long[] dims, DType dtype) {
        if (dims == null || dims.length == 0 || dims.length > config.maxDims()) {
            throw ArraydException.invalid("dims: " + Arrays.toString(dims) + " (expected: 1 to " + config.maxDims() + " extents)");
        }
        long n = 1;
        for (int i = 0; i < dims.length; i++) {
            if (dims[i] <= 0) {
                throw ArraydException.invalid("dims[" + i + "]: " + dims[i] + " (expected: > 0)");
            }
            n = multiplyOrMax(n, dims[i]);
        }
        if (multiplyOrMax(n, dtype.byteSize()) > (1L << 62)) {
            throw ArraydException.invalid("dims: " + Arrays.toString(dims) + " (expected: at most 2^62 bytes of "
                    + dtype.wireName() + " in all)");
        }
        return n;
    }

    private static long multiplyOrMax(long a, long b) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        return (hi != 0 || lo < 0) ? Long.MAX_VALUE : lo;
    }

    private static String describe(KernelSignature sig) {
        StringBuilder sb = new StringBuilder(sig.name()).append('(');
        for (int i = 0; i < sig.params().size(); i++) {
            KernelParam p = sig.params().get(i);
            sb.append(i == 0 ? "" : ", ").append(p.isBuffer() ? p.dtype().wireName() + "[] " : p.dtype().wireName() + " ")
                    .append(p.name());
        }
        return sb.append(')').toString();
    }

    private static String describeArg(CommandSpec.Arg a) {
        return switch (a) {
            case CommandSpec.BufferArg b -> "buffer " + Handles.format(b.buffer());
            case CommandSpec.ScalarArg sa when sa.value() != null -> sa.value().dtype().wireName() + " scalar";
            case CommandSpec.ScalarArg sa -> "unset scalar";
            case CommandSpec.MergeArg m -> "the merge buffer";
            case null -> "unset";
        };
    }

    static void whenAllDone(List<Event> events, Runnable action) {
        if (events.isEmpty()) {
            action.run();
            return;
        }
        AtomicInteger left = new AtomicInteger(events.size());
        for (Event e : events) {
            e.onDone(x -> {
                if (left.decrementAndGet() == 0) {
                    action.run();
                }
            });
        }
    }

    private void checkSession(Session s) {
        checkOpen();
        if (s.closed) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, s + " is closed");
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new ArraydException(ErrorCode.UNAVAILABLE, "the scheduler is shut down");
        }
        if (draining) {
            throw shuttingDown();
        }
    }

    private static ArraydException shuttingDown() {
        return new ArraydException(ErrorCode.UNAVAILABLE,
                "arrayd is shutting down: it accepts no new sessions or commands (work already accepted still runs)");
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
        ArraydException cause = new ArraydException(ErrorCode.CANCELLED, "cancelled by the client");
        // first find them all: cancelling one may settle others that depend on it
        List<Command> found = new ArrayList<>(eventIds.length);
        for (long id : eventIds) {
            Event e = s.events.lookup(id);
            Command c = e == null ? null : e.owner;
            if (c != null && !e.isDone()) {
                found.add(c);
            }
        }
        cancelAll(found, cause);
        return found.size();
    }

    /** Marks every one cancelled, then drops the queued ones (see {@link Command#markCancelled}). */
    private static void cancelAll(List<Command> found, ArraydException cause) {
        List<Command> marked = new ArrayList<>(found.size());
        for (Command c : found) {
            if (c.markCancelled(cause)) {
                marked.add(c);
            }
        }
        marked.forEach(Command::dropIfQueued);
    }

    /**
     * Cancels every pending command of the session as {@link #cancel} does, with {@code cause} (e.g.
     * CANCELLED when its call was cancelled, DEADLINE_EXCEEDED when the call's deadline passed).
     *
     * @return how many were cancelled
     */
    public int cancelPending(Session s, ArraydException cause) {
        List<Event> pending = new ArrayList<>();
        s.events.pendingEvents().forEach(pending::add);
        List<Command> found = new ArrayList<>(pending.size());
        for (Event e : pending) {
            Command c = e.owner;
            if (c != null && !e.isDone()) {
                found.add(c);
            }
        }
        cancelAll(found, cause);
        return found.size();
    }

    /**
     * Fails, with DEADLINE_EXCEEDED, every queued command whose deadline has passed on the scheduler's
     * clock, and so everything that waits on them. A timer calls it at the earliest queued deadline;
     * tests on a fake clock call it after moving the clock. Commands waiting for dependencies are checked
     * when they become ready, and every command once more when it is dispatched.
     *
     * @return how many were dropped
     */
    public int expireDeadlines() {
        long now = nanoTime.getAsLong();
        int n = 0;
        for (DeviceRuntime d : deviceList) {
            for (Command c : d.queue().expire(now)) {
                c.deadlinePassed();
                n++;
            }
        }
        return n;
    }

    private void expireDeadlinesQuietly() {
        try {
            expireDeadlines();
        } catch (RuntimeException e) {
            log.error("deadline check failed", e);
        }
    }

    // ---------------------------------------------------------------- shutdown

    /**
     * First step of a graceful shutdown: from now on, new sessions, buffers, streams, compilations and
     * commands are refused with UNAVAILABLE; everything already submitted keeps running. Idempotent.
     */
    public void beginShutdown() {
        synchronized (submitLock) {
            draining = true;
        }
    }

    /** Whether {@link #beginShutdown()} was called. */
    public boolean isShuttingDown() {
        return draining;
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
        if (closed) {
            return;
        }
        List<Event> pending = new ArrayList<>();
        for (Session s : List.copyOf(sessions.values())) {
            s.events.pendingEvents().forEach(pending::add);
            closeSession(s);
        }
        closed = true;
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
        deadlineTimer.shutdownNow();
        housekeeping.shutdown();
        try {
            housekeeping.awaitTermination(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (DeviceRuntime d : deviceList) {
            d.close();
        }
    }

    @Override
    public void close() {
        close(10_000);
    }
}
