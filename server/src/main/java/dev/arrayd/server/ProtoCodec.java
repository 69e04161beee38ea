package dev.arrayd.server;

import com.google.protobuf.ByteString;
import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.Quote;
import dev.arrayd.proto.v1.BufferInfo;
import dev.arrayd.proto.v1.DeviceInfo;
import dev.arrayd.proto.v1.EventCompletion;
import dev.arrayd.proto.v1.EventState;
import dev.arrayd.proto.v1.KernelModuleSource;
import dev.arrayd.proto.v1.KernelParam.KindCase;
import dev.arrayd.proto.v1.MemoryMode;
import dev.arrayd.proto.v1.Scalar;
import dev.arrayd.proto.v1.Sharing;
import dev.arrayd.scheduler.Buffer;
import dev.arrayd.scheduler.DeviceRuntime;
import dev.arrayd.scheduler.Event;
import dev.arrayd.scheduler.ModuleSpec;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Converts between arrayd.v1 values and scheduler values (dtypes, modes, scalars, modules, completions,
 * descriptions); commands are decoded by {@link CommandDecoder}. Validation of meaning is the scheduler's.
 */
final class ProtoCodec {

    private ProtoCodec() {}

    static DType dtype(dev.arrayd.proto.v1.DataType d, String field) {
        return switch (d) {
            case DATA_TYPE_F32 -> DType.F32;
            case DATA_TYPE_F64 -> DType.F64;
            case DATA_TYPE_I32 -> DType.I32;
            case DATA_TYPE_I64 -> DType.I64;
            case DATA_TYPE_U8 -> DType.U8;
            case DATA_TYPE_F16 -> DType.F16;
            case DATA_TYPE_BF16 -> DType.BF16;
            case DATA_TYPE_UNSPECIFIED, UNRECOGNIZED -> throw ArraydException.invalid(field + ": " + d
                    + " (expected: one of DATA_TYPE_F32, F64, I32, I64, U8, F16, BF16)");
        };
    }

    /** A wire enum value's name without its type's prefix ({@code OP_ADD} is {@code ADD}). */
    static String unprefixed(Enum<?> wire, String prefix) {
        String n = wire.name();
        return n.startsWith(prefix) ? n.substring(prefix.length()) : n;
    }

    static dev.arrayd.proto.v1.DataType dtype(DType d) {
        return dev.arrayd.proto.v1.DataType.valueOf("DATA_TYPE_" + d.name());
    }

    static Dialect dialect(dev.arrayd.proto.v1.Dialect d, String field) {
        return switch (d) {
            case DIALECT_C -> Dialect.C;
            case DIALECT_OPENCL_C -> Dialect.OPENCL_C;
            case DIALECT_CUDA_C -> Dialect.CUDA_C;
            case DIALECT_PTX -> Dialect.PTX;
            case DIALECT_IR -> Dialect.IR;
            case DIALECT_UNSPECIFIED, UNRECOGNIZED -> throw ArraydException.invalid(field + ": " + d
                    + " (expected: DIALECT_C, DIALECT_OPENCL_C, DIALECT_CUDA_C, DIALECT_PTX or DIALECT_IR)");
        };
    }

    /** SHARED (also for SHARING_UNSPECIFIED) or PER_STREAM. */
    static dev.arrayd.scheduler.Sharing sharing(Sharing sharing) {
        return switch (sharing) {
            case SHARING_UNSPECIFIED, SHARING_SHARED -> dev.arrayd.scheduler.Sharing.SHARED;
            case SHARING_PER_STREAM -> dev.arrayd.scheduler.Sharing.PER_STREAM;
            case UNRECOGNIZED -> throw ArraydException.invalid("sharing: unrecognized value (expected: SHARING_SHARED or SHARING_PER_STREAM)");
        };
    }

    static dev.arrayd.proto.v1.Dialect dialect(Dialect d) {
        return dev.arrayd.proto.v1.Dialect.valueOf("DIALECT_" + d.name());
    }

    /** The scheduler's memory mode for a request (its sharing is {@link #sharing}). */
    static dev.arrayd.scheduler.MemoryMode memoryMode(MemoryMode mode, Sharing sharing) {
        sharing(sharing);
        return switch (mode) {
            case MEMORY_MODE_UNSPECIFIED, MEMORY_MODE_DEVICE -> dev.arrayd.scheduler.MemoryMode.DEVICE;
            case MEMORY_MODE_HOSTED_CONSTANT -> dev.arrayd.scheduler.MemoryMode.HOSTED_CONSTANT;
            case MEMORY_MODE_HOSTED_CHANGED_ON_DEVICES -> dev.arrayd.scheduler.MemoryMode.HOSTED_CHANGED_ON_DEVICES;
            case MEMORY_MODE_HOSTED_VOLATILE -> dev.arrayd.scheduler.MemoryMode.HOSTED_VOLATILE;
            case MEMORY_MODE_LOCAL -> dev.arrayd.scheduler.MemoryMode.LOCAL;
            case UNRECOGNIZED -> throw ArraydException.invalid("memory_mode: unrecognized value (expected: MEMORY_MODE_DEVICE, "
                    + "MEMORY_MODE_HOSTED_CONSTANT, MEMORY_MODE_HOSTED_CHANGED_ON_DEVICES, MEMORY_MODE_HOSTED_VOLATILE or "
                    + "MEMORY_MODE_LOCAL)");
        };
    }

    static dev.arrayd.scheduler.MergeMode mergeMode(dev.arrayd.proto.v1.MergeMode m) {
        return switch (m) {
            case MERGE_MODE_UNSPECIFIED -> dev.arrayd.scheduler.MergeMode.NONE;
            case MERGE_MODE_COPY -> dev.arrayd.scheduler.MergeMode.COPY;
            case MERGE_MODE_STREAMING -> dev.arrayd.scheduler.MergeMode.STREAMING;
            case UNRECOGNIZED -> throw ArraydException.invalid("copy.merge: unrecognized value (expected: MERGE_MODE_UNSPECIFIED, "
                    + "MERGE_MODE_COPY or MERGE_MODE_STREAMING)");
        };
    }

    /** The wire form of a scalar. */
    static Scalar scalar(KernelArg.Scalar v) {
        return switch (v.dtype()) {
            case F32 -> Scalar.newBuilder().setF32(Float.intBitsToFloat((int) v.bits())).build();
            case F64 -> Scalar.newBuilder().setF64(Double.longBitsToDouble(v.bits())).build();
            case I32 -> Scalar.newBuilder().setI32((int) v.bits()).build();
            case I64 -> Scalar.newBuilder().setI64(v.bits()).build();
            case U8 -> Scalar.newBuilder().setU8((int) (v.bits() & 0xff)).build();
            case F16, BF16 -> Scalar.newBuilder().setF32(Float.intBitsToFloat((int) v.bits())).build();
        };
    }

    static KernelArg.Scalar scalar(Scalar s, String field) {
        return switch (s.getValueCase()) {
            case F32 -> KernelArg.Scalar.f32(s.getF32());
            case F64 -> KernelArg.Scalar.f64(s.getF64());
            case I32 -> KernelArg.Scalar.i32(s.getI32());
            case I64 -> KernelArg.Scalar.i64(s.getI64());
            case U8 -> {
                if (Integer.compareUnsigned(s.getU8(), 255) > 0) {
                    throw ArraydException.invalid(field + ".u8: " + Integer.toUnsignedString(s.getU8()) + " (expected: 0..255)");
                }
                yield KernelArg.Scalar.u8(s.getU8());
            }
            case VALUE_NOT_SET -> throw ArraydException.invalid(field + ": no value set (expected: one of f32, f64, i32, i64, u8)");
        };
    }

    static ModuleSpec module(KernelModuleSource m, String field) {
        Dialect dialect = dialect(m.getDialect(), field + ".dialect");
        List<KernelSignature> entries = new ArrayList<>();
        for (int i = 0; i < m.getEntryPointsCount(); i++) {
            var sig = m.getEntryPoints(i);
            List<KernelParam> params = new ArrayList<>();
            for (int p = 0; p < sig.getParamsCount(); p++) {
                var kp = sig.getParams(p);
                String at = field + ".entry_points[" + i + "].params[" + p + "]";
                if (kp.getKindCase() == KindCase.BUFFER) {
                    params.add(KernelParam.buffer(kp.getName(), dtype(kp.getBuffer().getDtype(), at + ".buffer.dtype"),
                            access(kp.getBuffer().getAccess(), at + ".buffer.access")));
                } else if (kp.getKindCase() == KindCase.SCALAR) {
                    DType d = dtype(kp.getScalar().getDtype(), at + ".scalar.dtype");
                    if (d == DType.F16 || d == DType.BF16) {
                        throw ArraydException.invalid(at + ".scalar.dtype: " + d.wireName()
                                + " (expected: f32, f64, i32, i64 or u8; half types are storage only)");
                    }
                    params.add(KernelParam.scalar(kp.getName(), d));
                } else {
                    throw ArraydException.invalid(at + ": neither buffer nor scalar");
                }
            }
            entries.add(new KernelSignature(sig.getName(), params));
        }
        if (dialect == Dialect.IR) {
            if (!m.hasIr()) {
                throw ArraydException.invalid(field + ".ir: unset (expected: the IR module, as the dialect is IR)");
            }
            var ir = IrCodec.module(m.getIr(), field + ".ir");
            KernelSource derived = KernelSource.ir(ir);
            if (!entries.isEmpty() && !entries.equals(derived.entryPoints())) {
                throw ArraydException.invalid(field + ".entry_points: " + Quote.list(entries) + " (expected: none, or exactly the"
                        + " IR kernels' signatures " + Quote.list(derived.entryPoints()) + ")");
            }
            return new ModuleSpec(derived, m.getBackend());
        }
        if (m.hasIr()) {
            throw ArraydException.invalid(field + ".ir: set (expected: only with dialect IR)");
        }
        return new ModuleSpec(new KernelSource(dialect, m.getSource(), entries), m.getBackend());
    }

    static Access access(dev.arrayd.proto.v1.Access a, String field) {
        return switch (a) {
            case ACCESS_READ -> Access.READ;
            case ACCESS_WRITE -> Access.WRITE;
            case ACCESS_READ_WRITE -> Access.READ_WRITE;
            case ACCESS_UNSPECIFIED, UNRECOGNIZED -> throw ArraydException.invalid(field + ": " + a
                    + " (expected: ACCESS_READ, ACCESS_WRITE or ACCESS_READ_WRITE)");
        };
    }

    static long[] longs(List<Long> values) {
        long[] out = new long[values.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = values.get(i);
        }
        return out;
    }

    /** A read-only view of the bytes, without copying when protobuf allows. */
    static MemorySegment segment(ByteString bytes) {
        return MemorySegment.ofBuffer(bytes.asReadOnlyByteBuffer());
    }

    /** The completion of {@code e}: its state, code, message and device time, without a download's data. */
    static EventCompletion completion(Event e) {
        EventCompletion.Builder b = EventCompletion.newBuilder().setEvent(e.id());
        switch (e.state()) {
            case PENDING -> b.setState(EventState.EVENT_STATE_PENDING);
            case SUCCEEDED -> b.setState(EventState.EVENT_STATE_SUCCEEDED).setDeviceTime(ProtoTime.ofNanos(e.deviceNanos()));
            case FAILED -> {
                ArraydException f = e.failure();
                b.setState(EventState.EVENT_STATE_FAILED).setCode(StatusMapper.codeValue(f)).setMessage(StatusText.bound(f.getMessage()));
            }
        }
        return b.build();
    }

    /** The completion of a forgotten or unknown event id, as a unary query answers it (states only, no data). */
    static EventCompletion completion(long id, Event e) {
        return e == Event.SUCCEEDED ? EventCompletion.newBuilder().setEvent(id).setState(EventState.EVENT_STATE_SUCCEEDED).build()
                : completion(e);
    }

    static DeviceInfo deviceInfo(DeviceRuntime d) {
        var info = d.info();
        DeviceInfo.Builder b = DeviceInfo.newBuilder()
                .setId(d.id().toString())
                .setBackend(d.backend())
                .setName(info.name())
                .setMemoryBytes(info.memoryBytes())
                .setMemoryBudgetBytes(d.pool().budgetBytes())
                .setMemoryUsedBytes(d.pool().usedBytes())
                .setComputeUnits(info.computeUnits())
                .setMaxWorkGroupSize(info.maxWorkGroupSize())
                .addAllMaxWorkItemSizes(info.maxWorkItemSizes())
                .setLocalMemoryBytes(info.localMemoryBytes())
                .setBaseAlignmentBytes(info.baseAlignment())
                .setSuggestedStreams(info.suggestedStreams())
                .setUnifiedMemory(info.unifiedMemory())
                .setMaxGridDims(info.maxGridDims())
                .setRingTransfers(d.streamsThroughRings());
        info.dtypes().stream().sorted().forEach(t -> b.addDtypes(dtype(t)));
        info.dialects().stream().sorted().forEach(t -> b.addDialects(dialect(t)));
        return b.build();
    }

    static BufferInfo bufferInfo(Buffer b, java.util.Map<String, dev.arrayd.scheduler.ReplicaState> replicas) {
        BufferInfo.Builder out = BufferInfo.newBuilder()
                .setBuffer(b.handle())
                .setDtype(dtype(b.dtype()))
                .setSizeBytes(b.sizeBytes())
                .setDevice(b.device().id().toString())
                .setMemoryMode(MemoryMode.valueOf("MEMORY_MODE_" + b.memoryMode().name()))
                .setSharing(b.sharing() == dev.arrayd.scheduler.Sharing.PER_STREAM ? Sharing.SHARING_PER_STREAM : Sharing.SHARING_SHARED)
                .setLabel(b.label());
        for (long d : b.dims()) {
            out.addDims(d);
        }
        if (b.isPadded()) {
            long[] left = b.layout().left();
            long[] right = b.layout().right();
            for (int i = 0; i < left.length; i++) {
                out.addPadding(dev.arrayd.proto.v1.AxisPadding.newBuilder().setLeft(left[i]).setRight(right[i]));
            }
            if (b.padValue() != null) {
                out.setPaddingValue(scalar(b.padValue()));
            }
        }
        out.setView(b.isView());
        replicas.forEach((where, state) -> out.addReplicas(dev.arrayd.proto.v1.Replica.newBuilder().setDevice(where)
                .setState(switch (state) {
                    case MODIFIED -> dev.arrayd.proto.v1.ReplicaState.REPLICA_STATE_MODIFIED;
                    case SHARED -> dev.arrayd.proto.v1.ReplicaState.REPLICA_STATE_SHARED;
                    case INVALID -> dev.arrayd.proto.v1.ReplicaState.REPLICA_STATE_INVALID;
                })));
        return out.build();
    }
}
