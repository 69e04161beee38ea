package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.StreamMarker;
import dev.arrayd.devices.api.support.AfterMarkers;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.ToLongFunction;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A device made of Java: heap slabs, one thread per stream, kernels as Java code. Lets the
 * scheduler be tested with real concurrency and no native code. Timing is jittered on purpose so
 * that missing ordering edges show up as wrong results.
 */
final class FakeDevice implements Device {

    private final DeviceId id;
    private final long memory;
    private final Map<Integer, MemorySegment> pools = new ConcurrentHashMap<>();
    private final List<FakeStream> streams = new ArrayList<>();
    private final AtomicInteger streamsOpen = new AtomicInteger();
    final AtomicInteger inlineRuns = new AtomicInteger();
    /** Commands handed to a stream behind native markers ({@code submitAfter}). */
    final AtomicInteger nativeWaits = new AtomicInteger();
    private long allocated;
    private volatile boolean jitter = true;
    private volatile boolean peer;
    // Controllable cost: when set, a command costs this many nanoseconds of device time (spun, and
    // reported as its device time), one command at a time across the whole device, like a saturated
    // single compute unit. Null: commands cost what they take, streams run in parallel.
    private volatile ToLongFunction<DeviceCommand> cost;
    private final Object computeUnit = new Object();
    // The gate: while held, nothing starts executing (workers wait, inline runs are declined).
    private final Object gate = new Object();
    private boolean held;
    /** Every command in the order it started executing. */
    final ConcurrentLinkedQueue<DeviceCommand> executed = new ConcurrentLinkedQueue<>();
    /** Every command handed to this device (submitted or offered inline), in order. */
    final ConcurrentLinkedQueue<DeviceCommand> handed = new ConcurrentLinkedQueue<>();

    FakeDevice(int ordinal, long memory) {
        this.id = new DeviceId("fake", ordinal);
        this.memory = memory;
    }

    /** Whether other fake devices may copy straight into this one (else the scheduler stages through host memory). */
    void peerCopies(boolean on) {
        peer = on;
    }

    @Override
    public boolean canCopyFrom(Device src) {
        return peer && src instanceof FakeDevice f && f.peer && src != this;
    }

    void jitter(boolean on) {
        jitter = on;
    }

    /** Gives every command {@code nanos} of device time, one at a time (see {@link #cost}); null = real. */
    void cost(ToLongFunction<DeviceCommand> nanos) {
        cost = nanos;
    }

    /** Stops commands from starting until {@link #open()}. */
    void hold() {
        synchronized (gate) {
            held = true;
        }
    }

    void open() {
        synchronized (gate) {
            held = false;
            gate.notifyAll();
        }
    }

    private boolean isHeld() {
        synchronized (gate) {
            return held;
        }
    }

    private void passGate() throws InterruptedException {
        synchronized (gate) {
            while (held) {
                gate.wait();
            }
        }
    }

    /** Runs a command as the device does: through the compute unit when costs are simulated. */
    private long run(DeviceCommand cmd) {
        executed.add(cmd);
        ToLongFunction<DeviceCommand> c = cost;
        if (c == null) {
            long t0 = System.nanoTime();
            execute(cmd);
            return System.nanoTime() - t0;
        }
        long nanos = c.applyAsLong(cmd);
        synchronized (computeUnit) {
            long t0 = System.nanoTime();
            execute(cmd);
            while (System.nanoTime() - t0 < nanos) {
                Thread.onSpinWait();
            }
        }
        return nanos;
    }

    int openStreams() {
        return streamsOpen.get();
    }

    /** Whether slab {@code poolId} is allocated on this device. */
    boolean hasPool(int poolId) {
        return pools.containsKey(poolId);
    }

    synchronized long allocatedBytes() {
        return allocated;
    }

    @Override
    public DeviceId id() {
        return id;
    }

    @Override
    public DeviceInfo info() {
        return new DeviceInfo(id, "fake device", memory, 2, 256, List.of(256L, 256L, 256L), 0, 16,
                EnumSet.allOf(DType.class), 2, true, EnumSet.of(Dialect.C), 3);
    }

    @Override
    public synchronized void allocPool(int poolId, long bytes, long alignment) {
        if (pools.containsKey(poolId)) {
            throw new ArraydException(ErrorCode.ALREADY_EXISTS, "pool " + poolId);
        }
        if (allocated + bytes > memory) {
            throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, "fake device full");
        }
        pools.put(poolId, MemorySegment.ofArray(new byte[Math.toIntExact(bytes)]));
        allocated += bytes;
    }

    @Override
    public synchronized void freePool(int poolId) {
        MemorySegment s = pools.remove(poolId);
        if (s != null) {
            allocated -= s.byteSize();
        }
    }

    @Override
    public void memsetZero(MemRef ref) {
        segment(ref).fill((byte) 0);
    }

    MemorySegment segment(MemRef ref) {
        MemorySegment pool = pools.get(ref.poolId());
        if (pool == null) {
            throw new ArraydException(ErrorCode.INVALID_ARGUMENT, "no pool " + ref.poolId());
        }
        return pool.asSlice(ref.offset(), ref.bytes());
    }

    @Override
    public synchronized NativeStream newStream(String name) {
        FakeStream s = new FakeStream(name);
        streams.add(s);
        return s;
    }

    @Override
    public void close() {
        List<FakeStream> all;
        synchronized (this) {
            all = List.copyOf(streams);
        }
        all.forEach(FakeStream::close);
    }

    void execute(DeviceCommand cmd) {
        switch (cmd) {
            case DeviceCommand.Launch l -> {
                FakeKernel k = (FakeKernel) l.kernel();
                List<MemorySegment> bufs = new ArrayList<>();
                List<Long> scalars = new ArrayList<>();
                for (KernelArg a : l.args()) {
                    switch (a) {
                        case KernelArg.Buffer b -> bufs.add(segment(b.ref()));
                        case KernelArg.Scalar s -> scalars.add(s.bits());
                    }
                }
                k.body().run(bufs, scalars, l.globalDims());
            }
            case DeviceCommand.Upload u -> MemorySegment.copy(u.src(), 0, segment(u.dst()), 0, u.dst().bytes());
            case DeviceCommand.Download d -> MemorySegment.copy(segment(d.src()), 0, d.dst(), 0, d.src().bytes());
            case DeviceCommand.Copy c -> MemorySegment.copy(segment(c.src()), 0, segment(c.dst()), 0, c.src().bytes());
            case DeviceCommand.PeerCopy p -> {
                if (!canCopyFrom(p.srcDevice())) {
                    throw new ArraydException(ErrorCode.UNIMPLEMENTED, "peer copy from " + p.srcDevice().id() + " to " + id);
                }
                MemorySegment.copy(((FakeDevice) p.srcDevice()).segment(p.src()), 0, segment(p.dst()), 0, p.src().bytes());
            }
            case DeviceCommand.Fill f -> {
                MemorySegment seg = segment(f.dst());
                for (long o = 0; o < seg.byteSize(); o += f.patternBytes()) {
                    for (int b = 0; b < f.patternBytes(); b++) {
                        seg.set(ValueLayout.JAVA_BYTE, o + b, (byte) (f.pattern() >>> (8 * b)));
                    }
                }
            }
        }
    }

    private final class FakeStream implements NativeStream {
        private record Item(DeviceCommand cmd, CommandCallback cb) {}

        private static final Item STOP = new Item(null, null);
        private final LinkedBlockingQueue<Item> queue = new LinkedBlockingQueue<>();
        private final AtomicInteger inFlight = new AtomicInteger();
        private final Thread worker;
        private volatile boolean closed;

        FakeStream(String name) {
            streamsOpen.incrementAndGet();
            worker = Thread.ofPlatform().daemon().name("fake-stream-" + name).start(this::loop);
        }

        private void loop() {
            try {
                while (true) {
                    Item it = queue.take();
                    if (it == STOP) {
                        return;
                    }
                    if (jitter) {
                        int spins = ThreadLocalRandom.current().nextInt(200);
                        for (int i = 0; i < spins; i++) {
                            Thread.onSpinWait();
                        }
                        if (ThreadLocalRandom.current().nextInt(8) == 0) {
                            Thread.yield();
                        }
                    }
                    if (it.cb() instanceof Marking mk) {
                        inFlight.decrementAndGet();
                        mk.marker().reach();
                        continue;
                    }
                    if (it.cb() instanceof AfterMarkers o) {
                        for (StreamMarker m : o.after()) {
                            ((FakeMarker) m).await();
                        }
                    }
                    passGate();
                    try {
                        long nanos = run(it.cmd());
                        inFlight.decrementAndGet();
                        it.cb().completed(nanos);
                    } catch (ArraydException e) {
                        inFlight.decrementAndGet();
                        it.cb().failed(e);
                    } catch (RuntimeException e) {
                        inFlight.decrementAndGet();
                        it.cb().failed(new ArraydException(ErrorCode.INTERNAL, e.toString(), e));
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                streamsOpen.decrementAndGet();
            }
        }

        @Override
        public DeviceId device() {
            return id;
        }

        /** Native markers, so that the scheduler's native waits run in every test on fake devices too. */
        @Override
        public StreamMarker mark() {
            synchronized (this) { // not behind the STOP of a close racing with it: never reached, a waiter would hang
                if (closed) {
                    return null; // its last commands may still run
                }
                FakeMarker m = new FakeMarker();
                inFlight.incrementAndGet();
                queue.add(new Item(null, new Marking(m)));
                return m;
            }
        }

        @Override
        public boolean canWaitFor(StreamMarker marker) {
            return marker instanceof FakeMarker;
        }

        @Override
        public void submitAfter(StreamMarker[] after, DeviceCommand command, CommandCallback callback) {
            nativeWaits.incrementAndGet();
            submit(command, new AfterMarkers(callback, after.clone()));
        }

        @Override
        public void submit(DeviceCommand command, CommandCallback callback) {
            synchronized (this) {
                if (closed) {
                    throw new ArraydException(ErrorCode.UNAVAILABLE, "stream closed");
                }
                inFlight.incrementAndGet();
                handed.add(command);
                queue.add(new Item(command, callback));
            }
        }

        /** Runs on the caller's thread half of the time, so both paths get exercised. */
        @Override
        public boolean tryRunInline(DeviceCommand command, CommandCallback callback) {
            if (closed || isHeld() || ThreadLocalRandom.current().nextBoolean()) {
                return false;
            }
            handed.add(command);
            inlineRuns.incrementAndGet();
            long nanos;
            try {
                nanos = run(command);
            } catch (ArraydException e) {
                callback.failed(e);
                return true;
            }
            callback.completed(nanos);
            return true;
        }

        @Override
        public boolean isIdle() {
            return inFlight.get() == 0;
        }

        @Override
        public void close() {
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
                queue.add(STOP);
            }
            try {
                worker.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A fake stream's marker: a latch its worker opens. */
    static final class FakeMarker implements StreamMarker {
        private final java.util.concurrent.CountDownLatch latch = new java.util.concurrent.CountDownLatch(1);

        void reach() {
            latch.countDown();
        }

        void await() throws InterruptedException {
            if (!latch.await(60, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new IllegalStateException("a fake marker was not reached within 60 s (a cycle of waits?)");
            }
        }

        @Override
        public boolean isReached() {
            return latch.getCount() == 0;
        }
    }

    /** A marker node in a fake stream's queue. */
    private record Marking(FakeMarker marker) implements CommandCallback {
        @Override
        public void completed(long deviceNanos) {
            marker.reach();
        }

        @Override
        public void failed(ArraydException cause) {
            marker.reach();
        }
    }
}
