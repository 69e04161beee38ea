package dev.arrayd.scheduler;

import dev.arrayd.devices.api.support.GuardedBy;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.support.LaunchGrid;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * A device as the scheduler runs it: the backend device, its slab pool, and the shared native
 * streams that carry the sessions' default streams.
 */
public final class DeviceRuntime {

    private final int index;
    private final Device device;
    private final String backend;
    private final SlabPool pool;
    private final List<NativeStream> sharedStreams;
    private final AtomicInteger nextShared = new AtomicInteger();
    // Commands submitted to streams on this device and not finished yet, per StreamKind ordinal.
    // LongAdder: incremented and decremented by many threads, read only by metrics and stats.
    private final LongAdder[] pending = {new LongAdder(), new LongAdder()};

    private final DeviceQueue queue;
    private final DeviceInfo info;
    private final LaunchGrid.Limits gridLimits;
    // expected device time of launches submitted here and not finished (placement's queued work)
    private final java.util.concurrent.atomic.AtomicLong backlogNanos = new java.util.concurrent.atomic.AtomicLong();
    /** Replicas dropped from here to make room; written under the lock, volatile for metrics. */
    @GuardedBy("SchedulerContext.submitLock")
    volatile long evictions;
    /** Replicas with device memory, least recently used first (eviction order). */
    @GuardedBy("SchedulerContext.submitLock")
    final java.util.LinkedHashMap<Replica, Boolean> resident = new java.util.LinkedHashMap<>(64, 0.75f, true);

    DeviceRuntime(Device device, String backend, SchedulerConfig config, int index, java.util.function.LongSupplier clock) {
        this.index = index;
        this.device = device;
        this.backend = backend;
        DeviceInfo info = device.info();
        this.info = info;
        this.gridLimits = LaunchGrid.Limits.of(info);
        long budget = (long) (info.memoryBytes() * config.memoryBudgetFraction());
        this.pool = new SlabPool(device, info.baseAlignment(), Math.min(config.slabBytes(), budget), budget);
        int n = Math.max(1, info.suggestedStreams());
        List<NativeStream> streams = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            streams.add(device.newStream(device.id() + "-shared-" + i));
        }
        this.sharedStreams = List.copyOf(streams);
        int depth = config.dispatchDepth() > 0 ? config.dispatchDepth()
                : Math.max(2 * n, Math.max(1, info.computeUnits())) + Math.max(0, device.commandsInTransit());
        this.queue = new DeviceQueue(sharedStreams, depth, clock);
    }

    /** Position among the scheduler's devices (0 = the default device): lets observers keep per-device state in arrays. */
    public int index() {
        return index;
    }

    public DeviceId id() {
        return device.id();
    }

    /** The device's description, read once when the device was opened (it does not change). */
    public DeviceInfo info() {
        return info;
    }

    /** The grid limits of {@link #info()}, for the launch checks. */
    LaunchGrid.Limits gridLimits() {
        return gridLimits;
    }

    public String backend() {
        return backend;
    }

    public SlabPool pool() {
        return pool;
    }

    /** The fair queue in front of this device. */
    DeviceQueue queue() {
        return queue;
    }

    /** Ready commands waiting in the fair queue for a dispatch slot. */
    public int queuedCommands() {
        return queue.queued();
    }

    /** Running average of this device's command times: placement's guess for a kernel never measured. */
    double averageCommandNanos() {
        return queue.averageCostNanos();
    }

    /** Most commands handed to this device at once (running or in its native streams). */
    public int dispatchDepth() {
        return queue.depth();
    }

    /** Whether the device can take commands now (a peer's device: while its link is up). */
    public boolean isReachable() {
        return device.isReachable();
    }

    /** Runs {@code onChange} after every change of {@link #isReachable()}. */
    public void watchReachability(Runnable onChange) {
        device.watchReachability(onChange);
    }

    Device device() {
        return device;
    }

    /** Whether ring transfers run on this device's buffers ({@link Device#streamsThroughRings()}). */
    public boolean streamsThroughRings() {
        return device.streamsThroughRings();
    }

    /**
     * Queue depth: commands submitted to streams of this kind on this device that have not finished
     * (waiting for dependencies, queued, or running).
     */
    public long pendingCommands(StreamKind kind) {
        return pending[kind.ordinal()].sum();
    }

    /** Replicas dropped from this device to make room (written back first when they held the only copy). */
    public long evictions() {
        return evictions;
    }

    /**
     * Nanoseconds during which this device had work: at least one command handed to it (running, or
     * waiting in its native streams) and not finished. Grows by at most the time passed, whatever the
     * number of streams.
     */
    public long busyNanos() {
        return queue.busyNanos();
    }

    /** Expected device time of the launches queued or running here (from their kernels' history). */
    public long backlogNanos() {
        return backlogNanos.get();
    }

    void backlogAdded(long nanos) {
        backlogNanos.addAndGet(nanos);
    }

    void backlogDone(long nanos) {
        backlogNanos.addAndGet(-nanos);
    }

    void commandSubmitted(StreamKind kind) {
        pending[kind.ordinal()].increment();
    }

    void commandFinished(StreamKind kind) {
        pending[kind.ordinal()].decrement();
    }

    /** Spreads default streams of sessions over the shared native streams. */
    NativeStream nextSharedStream() {
        return sharedStreams.get(Math.floorMod(nextShared.getAndIncrement(), sharedStreams.size()));
    }

    void close() {
        for (NativeStream s : sharedStreams) {
            s.close();
        }
        pool.releaseAll();
        device.close();
    }

    @Override
    public String toString() {
        return device.id().toString();
    }
}
