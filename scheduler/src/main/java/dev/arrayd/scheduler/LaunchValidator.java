package dev.arrayd.scheduler;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.Quote;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.support.LaunchGrid;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Validates a launch against its kernel's declared signature and its device: argument count and kinds,
 * dtypes, read-only handles, the merge buffer, the grid. Runs for every launch, outside the submit lock,
 * so it allocates nothing it can avoid: a launch identical to the kernel's last one shares its template.
 */
final class LaunchValidator {

    private static final LaunchGrid.Names NAMES = new LaunchGrid.Names("launch.global_dims", "launch.local_dims");

    private final SchedulerContext ctx;
    private final Placement placement;

    LaunchValidator(SchedulerContext ctx, Placement placement) {
        this.ctx = ctx;
        this.placement = placement;
    }

    /**
     * Validates launch {@code l} into {@code into} (returned).
     *
     * @param merges what earlier merge copies of the batch put in their streams' merge buffers, or null
     */
    Prepared prepare(Session s, CommandSpec spec, CommandSpec.LaunchOp l, Map<Stream, DType> merges, Prepared into) {
        CompiledKernel k = s.kernel(l.kernel(), "launch.kernel");
        List<KernelParam> params = k.signature().params();
        List<CommandSpec.Arg> args = l.args() == null ? List.of() : l.args();
        if (args.size() != params.size()) {
            throw ArraydException.invalid("launch.args: " + args.size() + " given (expected: " + params.size()
                    + " for kernel " + describe(k.signature()) + ")");
        }
        Buffer[] argBuffers = into.bufferArray(args.size());
        boolean usesMerge = resolveBuffers(s, args, argBuffers);
        Stream stream = stream(s, spec, l, k, argBuffers, usesMerge);
        DeviceRuntime d = stream.device();
        boolean placed = spec.stream() == 0 && (l.device() == null || l.device().isEmpty()) && ctx.deviceCount() > 1;
        Kernel native_ = k.forBackend(d.backend());
        if (native_ == null) {
            throw ArraydException.invalid("launch.kernel: " + k.name() + " is compiled for " + k.backends()
                    + ", not for " + d.id() + "'s backend " + d.backend());
        }
        long[] global = l.globalDims();
        long[] local = l.localDims() != null && l.localDims().length == 0 ? null : l.localDims();
        long items = LaunchGrid.check(global, local, d.gridLimits(), ctx.config().maxGridItems(), NAMES);
        // the last launch template of this kernel: while the arguments match it, it is shared (templates are immutable)
        CommandTemplate.Launch last = k.lastTemplate;
        Object[] lastArgs = last != null && last.kernel() == native_ && last.args().length == args.size() ? last.args() : null;
        Object[] targs = lastArgs != null ? lastArgs : new Object[args.size()];
        LaunchAccesses acc = into.accesses();
        acc.begin(argBuffers, args.size());
        DType mergeDtype = null;
        for (int i = 0; i < args.size(); i++) {
            KernelParam p = params.get(i);
            CommandSpec.Arg a = args.get(i);
            Object value;
            if (!p.isBuffer()) {
                value = scalar(i, p, a);
            } else if (a instanceof CommandSpec.MergeArg) {
                mergeDtype = mergeBuffer(i, p, stream, merges);
                value = acc.touch(null, true, false);
            } else {
                Buffer b = argBuffers[i];
                checkBuffer(s, i, p, a, b, d);
                int at = acc.touch(b, p.access().reads(), p.access().writes());
                value = a instanceof CommandSpec.RangeArg r ? new CommandTemplate.Range(at, r.offsetBytes(), r.sizeBytes()) : at;
            }
            targs = arg(targs, lastArgs, i, value);
        }
        if (native_.ir() != null) {
            checkIr(native_.ir(), global, local, args, argBuffers, params);
        }
        CommandTemplate.Launch t;
        if (targs == lastArgs && Arrays.equals(last.globalDims(), global) && Arrays.equals(last.localDims(), local)) {
            t = last; // the same launch as last time: no new template, arguments or dims
        } else {
            t = new CommandTemplate.Launch(native_, global.clone(), local == null ? null : local.clone(), targs);
            k.lastTemplate = t;
        }
        // A kernel may leave elements it does not write alone: no write of a launch covers "all of it".
        // Placed again when tracked, with the queues as the earlier commands of its batch left them.
        int n = acc.count();
        Prepared out = into.set(spec, stream, t, acc.buffers(into), acc.reads(), acc.writes(), Flags.none(n), k, items,
                mergeDtype, Prepared.NO_INDEXES, placed ? ctx.devices() : null);
        acc.clear();
        return out;
    }

    /**
     * What an IR kernel's proofs assume of a launch (grid, scalar bounds, buffer extents), checked now: a launch
     * that would fail these checks on the device is refused before it is tracked, so it never becomes the last
     * writer of a buffer. (The merge buffer's extent is only known when the launch runs; the device checks it.)
     */
    private static void checkIr(CheckedKernel ir, long[] global, long[] local, List<CommandSpec.Arg> args,
            Buffer[] argBuffers, List<KernelParam> params) {
        int n = args.size();
        long[] values = new long[n];
        boolean[] given = new boolean[n];
        long[] extents = new long[n];
        for (int i = 0; i < n; i++) {
            if (args.get(i) instanceof CommandSpec.ScalarArg sa) {
                values[i] = sa.value().bits();
                given[i] = true;
            } else if (args.get(i) instanceof CommandSpec.RangeArg r) {
                extents[i] = r.sizeBytes() / params.get(i).dtype().byteSize();
            } else {
                extents[i] = argBuffers[i] != null ? argBuffers[i].elements() : Long.MAX_VALUE;
            }
        }
        ir.checkLaunch(global, local, values, given, extents, NAMES, "launch.args");
    }

    /** Looks up the buffer arguments into {@code argBuffers}; true when an argument is the merge buffer. */
    private static boolean resolveBuffers(Session s, List<CommandSpec.Arg> args, Buffer[] argBuffers) {
        boolean usesMerge = false;
        for (int i = 0; i < args.size(); i++) {
            long handle = switch (args.get(i)) {
                case CommandSpec.BufferArg ba -> ba.buffer();
                case CommandSpec.RangeArg ra -> ra.buffer();
                case null, default -> 0;
            };
            if (handle != 0) {
                Buffer b = s.buffers.get(handle);
                argBuffers[i] = (b != null ? b : s.buffer(handle, "launch.args[" + i + "]")).storage();
            } else {
                argBuffers[i] = null;
                usesMerge |= args.get(i) instanceof CommandSpec.MergeArg;
            }
        }
        return usesMerge;
    }

    /** The stream the launch names, else the default stream of the device it names, else of a tentative device. */
    private Stream stream(Session s, CommandSpec spec, CommandSpec.LaunchOp l, CompiledKernel k, Buffer[] argBuffers,
            boolean usesMerge) {
        boolean namesDevice = l.device() != null && !l.device().isEmpty();
        if (spec.stream() != 0) {
            Stream stream = s.stream(spec.stream(), "stream");
            if (namesDevice && !ctx.device(l.device()).equals(stream.device())) {
                throw ArraydException.invalid("launch.device: " + Quote.string(l.device()) + " (expected: " + stream.device().id()
                        + ", the device of " + stream + ")");
            }
            return stream;
        }
        if (namesDevice) {
            return s.defaultStream(ctx.device(l.device()));
        }
        if (usesMerge) {
            throw ArraydException.invalid("launch: reads a merge buffer but names no stream or device (expected: "
                    + "the stream or device of the merge copy)");
        }
        // validated against one device it fits; placed for real when tracked (see Submission)
        return s.defaultStream(placement.tentative(k, argBuffers, l.globalDims(), l.localDims()));
    }

    /** A scalar argument for scalar parameter {@code p}. */
    private static Object scalar(int i, KernelParam p, CommandSpec.Arg a) {
        if (!(a instanceof CommandSpec.ScalarArg sa) || sa.value() == null) {
            throw ArraydException.invalid(argAt(i) + describeArg(a) + " (expected: " + p.dtype().wireName()
                    + " scalar for parameter " + p.name() + ")");
        }
        if (sa.value().dtype() != p.dtype()) {
            throw ArraydException.invalid(argAt(i) + sa.value().dtype().wireName() + " scalar (expected: "
                    + p.dtype().wireName() + " scalar for parameter " + p.name() + ")");
        }
        return sa.value();
    }

    /** The merge buffer of {@code stream} for READ parameter {@code p}: what it holds (or will, after the batch's merge copies). */
    private static DType mergeBuffer(int i, KernelParam p, Stream stream, Map<Stream, DType> merges) {
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
        return have;
    }

    /** Buffer {@code b} for buffer parameter {@code p} on device {@code d}. */
    private static void checkBuffer(Session s, int i, KernelParam p, CommandSpec.Arg a, Buffer b, DeviceRuntime d) {
        long handle; // the handle the client named (a view's, or the buffer's)
        DeviceInfo info = d.info();
        if (a instanceof CommandSpec.RangeArg r) {
            checkRange(i, p, r, b, info);
            handle = r.buffer();
        } else if (a instanceof CommandSpec.BufferArg ba) {
            if (b.dtype() != p.dtype()) {
                throw ArraydException.invalid(argAt(i) + b + " (expected: buffer of " + p.dtype().wireName()
                        + " for parameter " + p.name() + ")");
            }
            handle = ba.buffer();
        } else {
            throw ArraydException.invalid(argAt(i) + describeArg(a) + " (expected: buffer of " + p.dtype().wireName()
                    + " for parameter " + p.name() + ")");
        }
        if (!info.dtypes().contains(p.dtype())) {
            throw ArraydException.invalid(argAt(i) + b + " (its dtype is not supported by " + d.id() + ")");
        }
        if (p.access().writes() && s.isReadOnly(handle)) {
            s.writableBuffer(handle, "launch.args[" + i + "]"); // throws PERMISSION_DENIED
        }
    }

    /** A byte range of {@code b} for buffer parameter {@code p}: aligned, whole elements, inside the buffer's memory. */
    private static void checkRange(int i, KernelParam p, CommandSpec.RangeArg r, Buffer b, DeviceInfo info) {
        int width = p.dtype().byteSize();
        if (r.offsetBytes() % info.baseAlignment() != 0) {
            throw ArraydException.invalid(argAt(i) + "range.offset_bytes: " + r.offsetBytes() + " (expected: a multiple of "
                    + info.baseAlignment() + ", the base alignment of " + info.id() + ")");
        }
        if (r.sizeBytes() == 0 || r.sizeBytes() % width != 0) {
            throw ArraydException.invalid(argAt(i) + "range.size_bytes: " + r.sizeBytes() + " (expected: a positive "
                    + "multiple of " + width + ", the size of " + p.dtype().wireName() + " for parameter " + p.name() + ")");
        }
        if (r.offsetBytes() > b.sizeBytes() || r.sizeBytes() > b.sizeBytes() - r.offsetBytes()) {
            throw new ArraydException(ErrorCode.OUT_OF_RANGE, argAt(i) + "range [" + r.offsetBytes() + ", +"
                    + r.sizeBytes() + ") (expected: within the " + b.sizeBytes() + " bytes of " + b + ")");
        }
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

    /** {@code name(f32[] a, i32 n)}, for messages. */
    static String describe(KernelSignature sig) {
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
            case CommandSpec.RangeArg r -> "a range of buffer " + Handles.format(r.buffer());
            case CommandSpec.ScalarArg sa when sa.value() != null -> sa.value().dtype().wireName() + " scalar";
            case CommandSpec.ScalarArg sa -> "unset scalar";
            case CommandSpec.MergeArg m -> "the merge buffer";
            case null -> "unset";
        };
    }
}
