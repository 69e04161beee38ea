package dev.arrayd.devices.nullbackend;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.support.AbstractDevice;
import dev.arrayd.devices.api.support.LaunchArguments;
import dev.arrayd.devices.api.support.LaunchGrid;
import dev.arrayd.devices.api.support.SlabLedger;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A device that completes commands without computing: every command is checked as a real backend checks
 * it (memory in bounds, arguments against the signature, the grid against the limits), data commands move
 * bytes when the device stores data ({@link NullOptions#storesData()}), and a launch runs only what its
 * {@link NullBehaviour} adds (nothing by default). Device time is what the behaviour reports; with no
 * behaviour, 0: the device did no work.
 *
 * <p>Streams follow {@link NullOptions#completion()}: worker threads with markers, like a real device
 * ({@link NullStream}), or completion on the caller's thread, at once or when {@link #drainAll()} says
 * ({@link NullDirectStream}).
 */
public final class NullDevice extends AbstractDevice<NativeStream, NullSlab> {

    private final NullOptions options;
    private final Object owner; // the backend that opened it: its devices may copy from each other and share markers
    private final List<NullDirectStream> direct = new CopyOnWriteArrayList<>();
    private final AtomicInteger workers = new AtomicInteger();
    private final AtomicInteger inlineRuns = new AtomicInteger();
    private final AtomicInteger nativeWaits = new AtomicInteger();
    private volatile boolean peerCopies;
    /** Checks a launch's buffer arguments against the slabs (made once: a launch allocates nothing for it). */
    private final LaunchArguments.Sink checkArgs = new LaunchArguments.Sink() {
        @Override
        public void buffer(int index, KernelParam param, MemRef ref) {
            slab(ref, "args", index);
        }

        @Override
        public void scalar(int index, KernelParam param, long bits, int width) {
        }
    };

    NullDevice(DeviceInfo info, NullOptions options, Object owner) {
        super(info);
        this.options = options;
        this.owner = owner;
    }

    NullOptions options() {
        return options;
    }

    Object owner() {
        return owner;
    }

    // ---------------------------------------------------------------- memory

    @Override
    protected NullSlab allocateSlab(int poolId, long bytes, long alignment, long remaining) {
        if (!options.storesData()) {
            return new NullSlab(poolId, bytes, null, null);
        }
        Arena arena = Arena.ofShared();
        try {
            return new NullSlab(poolId, bytes, arena, arena.allocate(bytes, Math.max(alignment, info().baseAlignment())));
        } catch (OutOfMemoryError e) {
            arena.close();
            throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, id() + ": pool " + poolId + " of " + bytes
                    + " bytes (expected: at most the " + remaining + " bytes left); the allocation failed: " + e.getMessage(), e);
        }
    }

    /** Host memory used in place when the device stores data (as the CPU device does). */
    @Override
    protected NullSlab hostSlab(int poolId, MemorySegment memory) {
        return options.storesData() ? new NullSlab(poolId, memory.byteSize(), null, memory) : null;
    }

    @Override
    protected void freeSlab(NullSlab slab) {
        slab.free();
    }

    @Override
    public void memsetZero(MemRef ref) {
        NullSlab slab = slab(ref, "ref", -1);
        if (slab.segment() != null) {
            slab.segment().asSlice(ref.offset(), ref.bytes()).fill((byte) 0);
        }
    }

    /**
     * The bytes of {@code ref}, bounds-checked; for a behaviour's kernels. FAILED_PRECONDITION when the
     * device stores no data.
     */
    public MemorySegment segment(MemRef ref) {
        NullSlab slab = slab(ref, "ref", -1);
        if (slab.segment() == null) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, id() + " stores no data (expected: a device opened"
                    + " with storesData)");
        }
        return slab.segment().asSlice(ref.offset(), ref.bytes());
    }

    /** Whether other null devices of this backend may copy straight into this one (default: no; staged by the caller). */
    public void setPeerCopies(boolean on) {
        peerCopies = on;
    }

    @Override
    public boolean canCopyFrom(Device src) {
        return peerCopies && src instanceof NullDevice other && other != this && other.owner == owner && other.peerCopies;
    }

    // ---------------------------------------------------------------- streams

    @Override
    protected NativeStream makeStream(String name) {
        if (options.completion() == NullOptions.Completion.WORKER) {
            return new NullStream(this, name);
        }
        NullDirectStream s = new NullDirectStream(this, options.completion() == NullOptions.Completion.MANUAL);
        direct.add(s);
        return s;
    }

    /** {@link NullOptions.Completion#MANUAL}: completes every queued command, and what they release, until none is left. */
    public int drainAll() {
        int n = 0;
        boolean more = true;
        while (more) {
            more = false;
            for (NullDirectStream s : direct) {
                int k = s.drain();
                n += k;
                more |= k > 0;
            }
        }
        return n;
    }

    /** Stream worker threads running now. */
    public int workerThreads() {
        return workers.get();
    }

    /** Commands run on the caller's thread ({@code tryRunInline} accepted). */
    public int inlineRuns() {
        return inlineRuns.get();
    }

    /** Commands handed to a stream behind markers ({@code submitAfter}). */
    public int nativeWaits() {
        return nativeWaits.get();
    }

    void workerStarted() {
        workers.incrementAndGet();
    }

    void workerEnded() {
        workers.decrementAndGet();
    }

    void ranInline() {
        inlineRuns.incrementAndGet();
    }

    void waitedNatively() {
        nativeWaits.incrementAndGet();
    }

    /** A direct stream closed: it is forgotten. */
    void closed(NullDirectStream stream) {
        direct.remove(stream);
        forget(stream);
    }

    @Override
    protected void release(SlabLedger<NullSlab> slabs) {
        for (NullSlab slab : slabs.removeAll()) {
            slab.free();
        }
    }

    // ---------------------------------------------------------------- running a command

    /** Runs {@code command} through the behaviour ({@code inline}: on the caller's thread); returns its device time. */
    long run(DeviceCommand command, boolean inline) {
        if (options.behaviour() == NullBehaviour.NONE) {
            execute(command);
            return 0;
        }
        return options.behaviour().run(this, command, inline, () -> execute(command));
    }

    /** The device's own work: the checks, the bytes of a data command, the behaviour's part of a launch. */
    private void execute(DeviceCommand command) {
        switch (command) {
            case DeviceCommand.Launch launch -> {
                if (!(launch.kernel() instanceof NullKernel)) {
                    throw ArraydException.invalid("kernel: " + (launch.kernel() == null ? "null"
                            : launch.kernel().name() + " of backend " + launch.kernel().backend())
                            + " (expected: a kernel compiled by the null backend)");
                }
                LaunchArguments.pack(launch.kernel().signature(), launch.args(), checkArgs);
                LaunchGrid.check(launch.globalDims(), launch.localDims(), gridLimits(), Long.MAX_VALUE, LaunchGrid.Names.SPI);
                options.behaviour().launch(this, launch);
            }
            case DeviceCommand.Upload u -> {
                sameSize(u.src().byteSize(), u.dst());
                MemorySegment dst = data(u.dst(), "dst");
                if (dst != null) {
                    MemorySegment.copy(u.src(), 0, dst, 0, u.dst().bytes());
                }
            }
            case DeviceCommand.Download d -> {
                sameSize(d.dst().byteSize(), d.src());
                MemorySegment src = data(d.src(), "src");
                if (src != null) {
                    MemorySegment.copy(src, 0, d.dst(), 0, d.src().bytes());
                }
            }
            case DeviceCommand.Copy c -> {
                sameSize(c.dst().bytes(), c.src());
                MemorySegment src = data(c.src(), "src");
                MemorySegment dst = data(c.dst(), "dst");
                if (src != null) {
                    MemorySegment.copy(src, 0, dst, 0, c.src().bytes());
                }
            }
            case DeviceCommand.PeerCopy p -> {
                if (!canCopyFrom(p.srcDevice())) {
                    throw ArraydException.invalid("srcDevice: " + (p.srcDevice() == null ? "null" : p.srcDevice().id())
                            + " (expected: another null device of the same backend that allows peer copies)");
                }
                sameSize(p.dst().bytes(), p.src());
                MemorySegment src = ((NullDevice) p.srcDevice()).data(p.src(), "src");
                MemorySegment dst = data(p.dst(), "dst");
                if (src != null && dst != null) {
                    MemorySegment.copy(src, 0, dst, 0, p.src().bytes());
                }
            }
            case DeviceCommand.Fill f -> fill(f);
            case DeviceCommand.RingTransfer ring -> throw DeviceCommand.RingTransfer.unsupportedOn(id());
            case DeviceCommand.Sequence seq -> {
                for (int i = 0; i < seq.parts().size(); i++) {
                    execute(seq.part(i));
                }
            }
            case null -> throw ArraydException.invalid("command: null (expected: a DeviceCommand)");
        }
    }

    /** The bytes of a checked range, or null when the device stores no data. */
    private MemorySegment data(MemRef ref, String what) {
        NullSlab slab = slab(ref, what, -1);
        return slab.segment() == null ? null : slab.segment().asSlice(ref.offset(), ref.bytes());
    }

    private static void sameSize(long bytes, MemRef ref) {
        if (bytes != ref.bytes()) {
            throw ArraydException.invalid("bytes: " + bytes + " (expected: " + ref.bytes() + ", the size of " + ref + ")");
        }
    }

    private void fill(DeviceCommand.Fill f) {
        int width = f.patternBytes();
        if (width != 1 && width != 2 && width != 4 && width != 8) {
            throw ArraydException.invalid("patternBytes: " + width + " (expected: 1, 2, 4 or 8)");
        }
        if (f.dst().bytes() % width != 0) {
            throw ArraydException.invalid("dst: " + f.dst() + " (expected: a multiple of the " + width + "-byte pattern)");
        }
        MemorySegment seg = data(f.dst(), "dst");
        if (seg == null || seg.byteSize() == 0) {
            return;
        }
        for (int b = 0; b < width; b++) {
            seg.set(ValueLayout.JAVA_BYTE, b, (byte) (f.pattern() >>> (8 * b)));
        }
        for (long done = width; done < seg.byteSize(); done *= 2) { // the pattern doubles until it covers the range
            MemorySegment.copy(seg, 0, seg, done, Math.min(done, seg.byteSize() - done));
        }
    }
}
