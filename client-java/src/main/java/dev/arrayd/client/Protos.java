package dev.arrayd.client;

import dev.arrayd.proto.v1.BufferInfo;
import dev.arrayd.proto.v1.BufferParam;
import dev.arrayd.proto.v1.EventCompletion;
import dev.arrayd.proto.v1.KernelModuleSource;
import dev.arrayd.proto.v1.KernelParam;
import dev.arrayd.proto.v1.KernelSignature;
import dev.arrayd.proto.v1.ScalarParam;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;

/** Conversions between the client's values and the {@code arrayd.v1} messages. */
final class Protos {
    private Protos() {
    }

    /** An instant as the wire's Timestamp (a deadline). */
    static com.google.protobuf.Timestamp timestamp(java.time.Instant t) {
        return com.google.protobuf.Timestamp.newBuilder().setSeconds(t.getEpochSecond()).setNanos(t.getNano()).build();
    }

    static dev.arrayd.proto.v1.DataType dtype(DType d) {
        return switch (d) {
            case F32 -> dev.arrayd.proto.v1.DataType.DATA_TYPE_F32;
            case F64 -> dev.arrayd.proto.v1.DataType.DATA_TYPE_F64;
            case I32 -> dev.arrayd.proto.v1.DataType.DATA_TYPE_I32;
            case I64 -> dev.arrayd.proto.v1.DataType.DATA_TYPE_I64;
            case U8 -> dev.arrayd.proto.v1.DataType.DATA_TYPE_U8;
            case F16 -> dev.arrayd.proto.v1.DataType.DATA_TYPE_F16;
            case BF16 -> dev.arrayd.proto.v1.DataType.DATA_TYPE_BF16;
        };
    }

    /** The client's dtype, or null for unspecified and values this client does not know. */
    static DType dtype(dev.arrayd.proto.v1.DataType d) {
        return switch (d) {
            case DATA_TYPE_F32 -> DType.F32;
            case DATA_TYPE_F64 -> DType.F64;
            case DATA_TYPE_I32 -> DType.I32;
            case DATA_TYPE_I64 -> DType.I64;
            case DATA_TYPE_U8 -> DType.U8;
            case DATA_TYPE_F16 -> DType.F16;
            case DATA_TYPE_BF16 -> DType.BF16;
            default -> null;
        };
    }

    static dev.arrayd.proto.v1.MergeMode mergeMode(MergeMode m) {
        return switch (m) {
            case COPY -> dev.arrayd.proto.v1.MergeMode.MERGE_MODE_COPY;
            case STREAMING -> dev.arrayd.proto.v1.MergeMode.MERGE_MODE_STREAMING;
        };
    }

    static dev.arrayd.proto.v1.MemoryMode memoryMode(MemoryMode m) {
        return dev.arrayd.proto.v1.MemoryMode.valueOf("MEMORY_MODE_" + m.name());
    }

    static dev.arrayd.proto.v1.Access access(Access a) {
        return switch (a) {
            case READ -> dev.arrayd.proto.v1.Access.ACCESS_READ;
            case WRITE -> dev.arrayd.proto.v1.Access.ACCESS_WRITE;
            case READ_WRITE -> dev.arrayd.proto.v1.Access.ACCESS_READ_WRITE;
        };
    }

    static dev.arrayd.proto.v1.Dialect dialect(Dialect d) {
        return switch (d) {
            case C -> dev.arrayd.proto.v1.Dialect.DIALECT_C;
            case OPENCL_C -> dev.arrayd.proto.v1.Dialect.DIALECT_OPENCL_C;
            case CUDA_C -> dev.arrayd.proto.v1.Dialect.DIALECT_CUDA_C;
            case PTX -> dev.arrayd.proto.v1.Dialect.DIALECT_PTX;
            case IR -> dev.arrayd.proto.v1.Dialect.DIALECT_IR;
        };
    }

    static Dialect dialect(dev.arrayd.proto.v1.Dialect d) {
        return switch (d) {
            case DIALECT_C -> Dialect.C;
            case DIALECT_OPENCL_C -> Dialect.OPENCL_C;
            case DIALECT_CUDA_C -> Dialect.CUDA_C;
            case DIALECT_PTX -> Dialect.PTX;
            case DIALECT_IR -> Dialect.IR;
            default -> null;
        };
    }

    static EventState state(dev.arrayd.proto.v1.EventState s) {
        return switch (s) {
            case EVENT_STATE_PENDING -> EventState.PENDING;
            case EVENT_STATE_SUCCEEDED -> EventState.SUCCEEDED;
            case EVENT_STATE_FAILED -> EventState.FAILED;
            default -> EventState.UNKNOWN;
        };
    }

    static DeviceInfo device(dev.arrayd.proto.v1.DeviceInfo d) {
        List<DType> dtypes = new ArrayList<>();
        for (dev.arrayd.proto.v1.DataType t : d.getDtypesList()) {
            DType c = dtype(t);
            if (c != null) {
                dtypes.add(c);
            }
        }
        List<Dialect> dialects = new ArrayList<>();
        for (dev.arrayd.proto.v1.Dialect t : d.getDialectsList()) {
            Dialect c = dialect(t);
            if (c != null) {
                dialects.add(c);
            }
        }
        return new DeviceInfo(d.getId(), d.getBackend(), d.getName(), d.getMemoryBytes(),
                d.getMemoryBudgetBytes(), d.getMemoryUsedBytes(), d.getComputeUnits(), d.getMaxWorkGroupSize(),
                d.getMaxWorkItemSizesList(), d.getLocalMemoryBytes(), d.getBaseAlignmentBytes(), dtypes,
                d.getSuggestedStreams(), d.getUnifiedMemory(), dialects, d.getMaxGridDims(),
                d.getRingTransfers());
    }

    static BackendInfo backend(dev.arrayd.proto.v1.BackendInfo b) {
        return new BackendInfo(b.getName(), b.getAvailable(), b.getReason(), b.getDevicesList());
    }

    static BufferHandle buffer(BufferInfo info, DType requested) {
        DType dtype = dtype(info.getDtype());
        Padding padding = null;
        if (info.getPaddingCount() > 0) {
            long[] left = new long[info.getPaddingCount()];
            long[] right = new long[left.length];
            for (int i = 0; i < left.length; i++) {
                left[i] = info.getPadding(i).getLeft();
                right[i] = info.getPadding(i).getRight();
            }
            padding = new Padding(left, right, info.hasPaddingValue() ? Scalars.value(info.getPaddingValue()) : null);
        }
        return new BufferHandle(info.getBuffer(), dtype == null ? requested : dtype, info.getDimsList(),
                info.getSizeBytes(), info.getDevice(), padding);
    }

    static com.google.protobuf.Duration duration(java.time.Duration d) {
        return com.google.protobuf.Duration.newBuilder().setSeconds(d.getSeconds()).setNanos(d.getNano()).build();
    }

    static java.time.Duration duration(com.google.protobuf.Duration d) {
        return java.time.Duration.ofSeconds(d.getSeconds(), d.getNanos());
    }

    /** A duration in nanoseconds, saturating (device times are far below the bound). */
    static long nanos(com.google.protobuf.Duration d) {
        return d.getSeconds() >= Long.MAX_VALUE / 1_000_000_000L ? Long.MAX_VALUE
                : d.getSeconds() * 1_000_000_000L + d.getNanos();
    }

    static EventResult result(EventCompletion c) {
        return new EventResult(c.getEvent(), state(c.getState()), c.getCode(), c.getMessage(), nanos(c.getDeviceTime()),
                c.getData().isEmpty() ? null : c.getData().asReadOnlyByteBuffer());
    }

    static Status status(int code, String message) {
        Status s = Status.fromCodeValue(code);
        return message.isEmpty() ? s : s.withDescription(message);
    }

    static KernelSignature signature(KernelSpec spec) {
        KernelSignature.Builder b = KernelSignature.newBuilder().setName(spec.name());
        for (KernelSpec.Param p : spec.params()) {
            KernelParam.Builder kp = KernelParam.newBuilder().setName(p.name());
            switch (p) {
                case KernelSpec.BufferParam bp -> kp.setBuffer(
                        BufferParam.newBuilder().setDtype(dtype(bp.dtype())).setAccess(access(bp.access())));
                case KernelSpec.ScalarParam sp -> kp.setScalar(ScalarParam.newBuilder().setDtype(dtype(sp.dtype())));
            }
            b.addParams(kp);
        }
        return b.build();
    }

    static KernelModuleSource module(KernelModuleSpec m) {
        KernelModuleSource.Builder b = KernelModuleSource.newBuilder()
                .setDialect(dialect(m.dialect()))
                .setSource(m.source())
                .setBackend(m.backend());
        if (!m.ir().isEmpty()) {
            // the kernels' own parameters are the entry points: the daemon derives them
            dev.arrayd.proto.v1.IrModule.Builder ir = dev.arrayd.proto.v1.IrModule.newBuilder();
            m.ir().forEach(k -> ir.addKernels(k.proto()));
            return b.setIr(ir).build();
        }
        for (KernelSpec e : m.entries()) {
            b.addEntryPoints(signature(e));
        }
        return b.build();
    }
}
