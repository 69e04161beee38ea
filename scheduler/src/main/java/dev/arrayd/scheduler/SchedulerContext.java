package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Quote;
import dev.arrayd.devices.api.support.GuardedBy;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.StampedLock;
import java.util.function.LongSupplier;

/**
 * What every room of the scheduler shares: its configuration, its devices, its clock and observer, the
 * one submit lock, and whether it still takes work.
 *
 * <p><b>The submit lock</b> ({@link #submitLock}) orders every change to the dependency state: stream
 * tails, replicas and their hazards (see {@link Coherence}), merge buffers, per-stream instances, and
 * each session's registration of events. It is held briefly: validation runs before it, devices run
 * after it. Fields it guards say so with {@code @GuardedBy("SchedulerContext.submitLock")}, methods that
 * must be called under it with {@code @GuardedBy} too, and check it with {@link #holdsSubmitLock()}.
 *
 * <p>It is a read-write lock. Its write side ({@link #lockSubmit()}) is the lock every change above is made
 * under, one at a time across all sessions. Its read side ({@link #lockShared()}) admits, together with a
 * session's claim ({@link Session#tryEnterLocal}), submissions that touch only that session's state: its
 * streams, its events, and replicas of buffers no other session ever held that already have current memory on
 * the device (see {@link SessionLocal}). Sessions submit such commands side by side, and none waits for another
 * session's submission that a preempted thread holds.
 */
final class SchedulerContext {

    private final SchedulerConfig config;
    /** Every device by id (read without the lock: a device is added here before it is published). */
    private final Map<DeviceId, DeviceRuntime> byId = new java.util.concurrent.ConcurrentHashMap<>();
    /** Every device by its id's text ({@code cpu:0}): what a request names, found without parsing it. */
    private final Map<String, DeviceRuntime> byText = new java.util.concurrent.ConcurrentHashMap<>();
    /** The devices in index order; replaced, never changed, when one is added (under the submit lock). */
    private volatile List<DeviceRuntime> devices;
    private final LongSupplier nanoTime;
    private final SchedulerObserver observer;
    /** The submit lock (see the class comment): a stamped lock (its read side one atomic update), made reentrant below. */
    private final StampedLock submitLock = new StampedLock();
    /** The thread holding the write side (only that thread ever reads itself here), its stamp and hold count. */
    private Thread writer;
    private long writeStamp;
    private int writeHolds;
    private volatile boolean closed;
    @GuardedBy("submitLock") // written under it (read without: volatile)
    private volatile boolean draining;

    /**
     * @param devices the devices at the start; none only where more may join ({@link #add}): until one does, every
     *                request that needs a device fails UNAVAILABLE
     */
    SchedulerContext(SchedulerConfig config, List<Device> devices, LongSupplier nanoTime, SchedulerObserver observer) {
        this.config = config;
        this.nanoTime = nanoTime;
        this.observer = observer;
        List<DeviceRuntime> runtimes = new java.util.ArrayList<>();
        for (Device d : devices) {
            runtimes.add(register(d, runtimes.size()));
        }
        this.devices = List.copyOf(runtimes);
    }

    /** A runtime for {@code d} at {@code index}, found by its id from now on; a second device of that id is refused. */
    private DeviceRuntime register(Device d, int index) {
        DeviceRuntime r = new DeviceRuntime(d, d.backend(), config, index, nanoTime);
        if (byId.putIfAbsent(d.id(), r) != null) {
            throw new IllegalArgumentException("device: " + d.id() + " (already present)");
        }
        byText.put(d.id().toString(), r);
        return r;
    }

    /**
     * Adds a device found after the start (a peer that came up): the next index, last in {@link #devices()}.
     * Buffers grow their replica slots for it when they first use it ({@link Buffer#replica}).
     */
    @GuardedBy("submitLock")
    DeviceRuntime add(Device d) {
        assert holdsSubmitLock();
        List<DeviceRuntime> now = devices;
        DeviceRuntime r = register(d, now.size());
        List<DeviceRuntime> grown = new java.util.ArrayList<>(now);
        grown.add(r);
        devices = List.copyOf(grown);
        return r;
    }

    SchedulerConfig config() {
        return config;
    }

    /** The devices in the order clients see them (the first is the default). */
    List<DeviceRuntime> devices() {
        return devices;
    }

    int deviceCount() {
        return devices.size();
    }

    long now() {
        return nanoTime.getAsLong();
    }

    LongSupplier clock() {
        return nanoTime;
    }

    SchedulerObserver observer() {
        return observer;
    }

    /** The device with this id; empty or null = the first device. */
    DeviceRuntime device(String id) {
        if (id == null || id.isEmpty()) {
            return first();
        }
        DeviceRuntime named = byText.get(id);
        if (named != null) {
            return named;
        }
        DeviceId parsed; // (another spelling of a device's id, or none)
        try {
            parsed = DeviceId.parse(id);
        } catch (IllegalArgumentException e) {
            throw ArraydException.invalid(e.getMessage());
        }
        DeviceRuntime d = byId.get(parsed);
        if (d == null) {
            throw ArraydException.notFound("device: " + Quote.string(id) + " (not found; devices: "
                    + devices.stream().map(DeviceRuntime::id).toList() + ")");
        }
        return d;
    }

    /** The first device (the default one); UNAVAILABLE while there is none yet. */
    DeviceRuntime first() {
        List<DeviceRuntime> now = devices;
        if (now.isEmpty()) {
            throw new ArraydException(ErrorCode.UNAVAILABLE, "no device yet (this daemon's devices are its peers', and "
                    + "none has answered)");
        }
        return now.getFirst();
    }

    /** Takes the submit lock's write side (reentrant); every change to the dependency state is made under it. */
    void lockSubmit() {
        Thread me = Thread.currentThread();
        if (writer == me) {
            writeHolds++;
            return;
        }
        long stamp = submitLock.writeLock();
        writer = me;
        writeStamp = stamp;
        writeHolds = 1;
    }

    void unlockSubmit() {
        if (writer != Thread.currentThread()) {
            throw new IllegalMonitorStateException("the submit lock's write side is not held by this thread");
        }
        if (--writeHolds == 0) {
            writer = null;
            submitLock.unlockWrite(writeStamp);
        }
    }

    /**
     * Takes the submit lock's read side (not reentrant: never while holding either side): with a session's
     * {@link Session#tryEnterLocal} claim, see the class comment. Returns the stamp to give back.
     */
    long lockShared() {
        return submitLock.readLock();
    }

    void unlockShared(long stamp) {
        submitLock.unlockRead(stamp);
    }

    /** Whether the calling thread holds the submit lock's write side (for assertions). */
    boolean holdsSubmitLock() {
        return writer == Thread.currentThread();
    }

    /** Whether some thread holds the submit lock's read side (for assertions). */
    boolean sharedHeld() {
        return submitLock.isReadLocked();
    }

    /** From now on new sessions and commands are refused (see {@link Scheduler#beginShutdown()}). */
    void beginDraining() {
        lockSubmit();
        try {
            draining = true;
        } finally {
            unlockSubmit();
        }
    }

    boolean draining() {
        return draining;
    }

    void markClosed() {
        closed = true;
    }

    boolean closed() {
        return closed;
    }

    /** UNAVAILABLE once the scheduler is shut down or shutting down. */
    void checkOpen() {
        if (closed) {
            throw new ArraydException(ErrorCode.UNAVAILABLE, "the scheduler is shut down");
        }
        if (draining) {
            throw shuttingDown();
        }
    }

    /** {@link #checkOpen()}, and FAILED_PRECONDITION for a closed session. */
    void checkSession(Session s) {
        checkOpen();
        if (s.closed) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, s + " is closed");
        }
    }

    /** Under the submit lock: UNAVAILABLE while draining, FAILED_PRECONDITION for a closed session. */
    @GuardedBy("submitLock")
    void checkAccepting(Session s) {
        assert holdsSubmitLock();
        if (draining) {
            throw shuttingDown();
        }
        if (s != null && s.closed) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, s + " is closed");
        }
    }

    static ArraydException shuttingDown() {
        return new ArraydException(ErrorCode.UNAVAILABLE,
                "arrayd is shutting down: it accepts no new sessions or commands (work already accepted still runs)");
    }
}
