package dev.arrayd.client;

import dev.arrayd.proto.v1.Arg;
import dev.arrayd.proto.v1.Command;
import java.util.List;

/**
 * A {@link Launch} as the command the session stream carries: its grid checked (1 to 3 extents, local
 * dividing global), its arguments checked against the kernel's signature and encoded (buffers by handle,
 * scalars in the parameter's type, the merge buffer for a READ parameter). Pure; the session and graph
 * recorders add the event, the waits and the stream. A deadline goes with it.
 */
final class LaunchCommands {

    private LaunchCommands() {}

    /** The launch as a command, checked against the kernel's signature; no event, waits or stream yet. */
    static Command.Builder of(Launch launch) {
        KernelSpec sig = launch.kernel().signature();
        dev.arrayd.proto.v1.Launch.Builder lb = dev.arrayd.proto.v1.Launch.newBuilder()
                .setKernel(launch.kernel().id())
                .setDevice(launch.device());
        List<Long> global = launch.global();
        if (global.isEmpty() || global.size() > 3) {
            throw new IllegalArgumentException("global: " + global + " (expected: 1 to 3 extents)");
        }
        for (int i = 0; i < global.size(); i++) {
            if (global.get(i) <= 0) {
                throw new IllegalArgumentException("global[" + i + "]: " + global.get(i) + " (expected: > 0)");
            }
            lb.addGlobalDims(global.get(i));
        }
        List<Long> local = launch.local();
        if (!local.isEmpty() && local.size() != global.size()) {
            throw new IllegalArgumentException("local: " + local + " (expected: " + global.size()
                    + " extents, like global, or none)");
        }
        for (int i = 0; i < local.size(); i++) {
            long l = local.get(i);
            if (l <= 0 || global.get(i) % l != 0) {
                throw new IllegalArgumentException("local[" + i + "]: " + l + " (expected: a divisor of global["
                        + i + "] = " + global.get(i) + ")");
            }
            lb.addLocalDims(l);
        }
        List<Object> args = launch.args();
        List<KernelSpec.Param> params = sig.params();
        if (args.size() != params.size()) {
            throw new IllegalArgumentException("args: " + args.size() + " values (expected: " + params.size()
                    + ", one per parameter of " + sig.name() + ")");
        }
        for (int i = 0; i < args.size(); i++) {
            lb.addArgs(arg(i, args.get(i), params.get(i)));
        }
        Command.Builder cmd = Command.newBuilder().setLaunch(lb);
        if (launch.deadline() != null) {
            cmd.setDeadline(Protos.timestamp(launch.deadline()));
        }
        return cmd;
    }

    private static Arg arg(int i, Object value, KernelSpec.Param param) {
        String what = "args[" + i + "]";
        return switch (param) {
            case KernelSpec.BufferParam p when value == MergeBuffer.INSTANCE -> {
                if (p.access() != Access.READ) {
                    throw Scalars.bad(what, value, "a READ parameter for the merge buffer (" + p.name() + " is "
                            + p.access() + ")");
                }
                yield Arg.newBuilder().setMergeBuffer(true).build();
            }
            case KernelSpec.BufferParam p when value instanceof BufferRange r -> Arg.newBuilder()
                    .setRange(dev.arrayd.proto.v1.BufferRange.newBuilder().setBuffer(r.buffer().id())
                            .setOffsetBytes(r.offsetBytes()).setSizeBytes(r.sizeBytes()))
                    .build();
            case KernelSpec.BufferParam p -> {
                if (!(value instanceof BufferHandle b)) {
                    throw Scalars.bad(what, value, "a BufferHandle (or BufferRange) for buffer parameter " + p.name() + " of type "
                            + p.dtype());
                }
                if (b.dtype() != p.dtype()) {
                    throw Scalars.bad(what, value, "a buffer of type " + p.dtype() + " for buffer parameter "
                            + p.name());
                }
                yield Arg.newBuilder().setBuffer(b.id()).build();
            }
            case KernelSpec.ScalarParam p -> Arg.newBuilder()
                    .setScalar(Scalars.of(value, p.dtype(), what, "scalar parameter " + p.name() + " of type "
                            + p.dtype()))
                    .build();
        };
    }
}
