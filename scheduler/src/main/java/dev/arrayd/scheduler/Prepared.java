package dev.arrayd.scheduler;

import dev.arrayd.devices.api.DType;
import java.util.Arrays;
import java.util.List;

/**
 * A validated command, ready to be tracked: what {@link Scheduler#submit} learns from a {@link CommandSpec}
 * before it takes the submit lock, and what a recorded {@link Graph} keeps of each of its commands.
 *
 * <p>Mutable so that the common submission, one command, allocates none: the scheduler keeps one
 * {@linkplain #reusable() reusable} instance that a submission borrows for the length of the call (see
 * {@code Submission#submit}), together with its buffer arrays and the one-element batch holding it.
 * Every other instance (batches of several commands, graphs) is filled once and not changed after:
 * a graph's are read by every replay.
 */
final class Prepared {

    /** Exact-length buffer arrays kept by a reusable instance for commands touching fewer buffers than this. */
    private static final int SCRATCH = 8;
    static final int[] NO_INDEXES = new int[0];

    private CommandSpec spec;
    private Stream stream;
    private CommandTemplate template;
    private Buffer[] buffers;
    private boolean[] reads;
    private boolean[] writes;
    private boolean[] whole;
    private CompiledKernel kernel;
    private long size;
    private DType mergeDtype;
    private int[] after;
    private List<DeviceRuntime> placeAmong;
    /** What validation may reuse (one reference: a command of a batch is one allocation, and stays small); or null. */
    private final Scratch scratch;

    /**
     * What validating into a Prepared may reuse: a reusable instance's exact-length buffer arrays (index =
     * length) and itself as a batch of one; the launch accumulator, of the reusable instance or shared by
     * the commands of one batch (validated one after the other).
     */
    static final class Scratch {
        private final Buffer[][] buffers;
        private final Prepared[] alone;
        private final LaunchAccesses accesses = new LaunchAccesses();

        private Scratch(Prepared reusable) {
            this.buffers = reusable == null ? null : new Buffer[SCRATCH][];
            this.alone = reusable == null ? null : new Prepared[] {reusable};
        }
    }

    private Prepared(boolean reusable, Scratch shared) {
        this.scratch = reusable ? new Scratch(this) : shared;
    }

    /** One to fill once (a command of a graph or a batch). */
    static Prepared once() {
        return new Prepared(false, null);
    }

    /** One to fill once, with the scratch shared by the commands of its batch ({@link #batchScratch()}). */
    static Prepared once(Scratch batch) {
        return new Prepared(false, batch);
    }

    /** Scratch for the commands of one batch (its launches allocate no accumulator each). */
    static Scratch batchScratch() {
        return new Scratch(null);
    }

    /** One to fill again for every submission that borrows it; {@link #clear()} between them. */
    static Prepared reusable() {
        return new Prepared(true, null);
    }

    /**
     * Fills it in.
     *
     * @param buffers    the buffers it touches, each once; a null entry stands for the merge buffer of its stream
     * @param whole      per buffer: a write that covers all of it (no need to make the replica current first)
     * @param size       work-items of a launch; bytes moved by a data command
     * @param mergeDtype for a launch that reads its stream's merge buffer: the dtype it expects
     * @param after      the commands of the same submission (by position) it waits on
     * @param placeAmong for a launch to be placed when tracked: the devices to choose from; else null
     */
    Prepared set(CommandSpec spec, Stream stream, CommandTemplate template, Buffer[] buffers, boolean[] reads,
            boolean[] writes, boolean[] whole, CompiledKernel kernel, long size, DType mergeDtype, int[] after,
            List<DeviceRuntime> placeAmong) {
        this.spec = spec;
        this.stream = stream;
        this.template = template;
        this.buffers = buffers;
        this.reads = reads;
        this.writes = writes;
        this.whole = whole;
        this.kernel = kernel;
        this.size = size;
        this.mergeDtype = mergeDtype;
        this.after = after;
        this.placeAmong = placeAmong;
        return this;
    }

    /** {@link #set} for a command that waits on no other command of its submission and is not placed. */
    Prepared set(CommandSpec spec, Stream stream, CommandTemplate template, Buffer[] buffers, boolean[] reads,
            boolean[] writes, boolean[] whole, CompiledKernel kernel, long size, DType mergeDtype) {
        return set(spec, stream, template, buffers, reads, writes, whole, kernel, size, mergeDtype, NO_INDEXES, null);
    }

    /**
     * The same command, as a new instance filled once, with another spec, buffers (same dtypes and sizes:
     * checked by the caller) and template, waiting on the commands at {@code after} in the same submission.
     */
    Prepared with(CommandSpec spec, Buffer[] buffers, CommandTemplate template, int[] after) {
        return once().set(spec, stream, template, buffers, reads, writes, whole, kernel, size, mergeDtype, after,
                placeAmong);
    }

    /**
     * An array of {@code n} buffers for {@link #set}: a reusable instance's own (its entries are stale: the
     * caller writes them all) while short, else a new one. Two lengths give two distinct arrays.
     */
    Buffer[] bufferArray(int n) {
        Buffer[][] arrays = scratch == null ? null : scratch.buffers;
        if (arrays == null || n >= SCRATCH) {
            return new Buffer[n];
        }
        Buffer[] a = arrays[n];
        return a != null ? a : (arrays[n] = new Buffer[n]);
    }

    /** What a launch validated into it touches: a reusable instance's own, else a new one. */
    LaunchAccesses accesses() {
        return scratch != null ? scratch.accesses : new LaunchAccesses();
    }

    /** Itself as a batch of one (a reusable instance only). */
    Prepared[] alone() {
        return scratch == null ? null : scratch.alone;
    }

    /** Forgets the command it held (a reusable instance between submissions: it keeps nothing alive). */
    void clear() {
        if (scratch != null && scratch.buffers != null) {
            for (Buffer[] a : scratch.buffers) {
                if (a != null) {
                    Arrays.fill(a, null);
                }
            }
        }
        set(null, null, null, null, null, null, null, null, 0, null, null, null);
    }

    CommandSpec spec() {
        return spec;
    }

    Stream stream() {
        return stream;
    }

    CommandTemplate template() {
        return template;
    }

    Buffer[] buffers() {
        return buffers;
    }

    boolean[] reads() {
        return reads;
    }

    boolean[] writes() {
        return writes;
    }

    boolean[] whole() {
        return whole;
    }

    CompiledKernel kernel() {
        return kernel;
    }

    long size() {
        return size;
    }

    DType mergeDtype() {
        return mergeDtype;
    }

    int[] after() {
        return after;
    }

    List<DeviceRuntime> placeAmong() {
        return placeAmong;
    }
}
