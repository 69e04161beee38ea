package dev.arrayd.server;

import dev.arrayd.proto.v1.Access;
import dev.arrayd.proto.v1.Arg;
import dev.arrayd.proto.v1.BufferParam;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CompileRequest;
import dev.arrayd.proto.v1.CreateBufferRequest;
import dev.arrayd.proto.v1.DataType;
import dev.arrayd.proto.v1.Dialect;
import dev.arrayd.proto.v1.KernelModuleSource;
import dev.arrayd.proto.v1.KernelParam;
import dev.arrayd.proto.v1.KernelSignature;
import dev.arrayd.proto.v1.Launch;
import dev.arrayd.proto.v1.Scalar;
import dev.arrayd.proto.v1.ScalarParam;

/** Small builders for test messages. */
final class Protos {

    static final String VADD = """
            ARRAYD_KERNEL void vadd(ARRAYD_ITEM, const float *a, const float *b, float *c, int32_t n) {
                int64_t i = arrayd_global_id(0);
                if (i < n) c[i] = a[i] + b[i];
            }
            """;

    static final KernelSignature VADD_SIG = KernelSignature.newBuilder().setName("vadd")
            .addParams(buffer("a", DataType.DATA_TYPE_F32, Access.ACCESS_READ))
            .addParams(buffer("b", DataType.DATA_TYPE_F32, Access.ACCESS_READ))
            .addParams(buffer("c", DataType.DATA_TYPE_F32, Access.ACCESS_WRITE))
            .addParams(KernelParam.newBuilder().setName("n").setScalar(ScalarParam.newBuilder().setDtype(DataType.DATA_TYPE_I32)))
            .build();

    private Protos() {}

    static KernelParam buffer(String name, DataType dtype, Access access) {
        return KernelParam.newBuilder().setName(name).setBuffer(BufferParam.newBuilder().setDtype(dtype).setAccess(access)).build();
    }

    static CompileRequest compile(String session, String source, KernelSignature... sigs) {
        KernelModuleSource.Builder m = KernelModuleSource.newBuilder().setDialect(Dialect.DIALECT_C).setSource(source);
        for (KernelSignature s : sigs) {
            m.addEntryPoints(s);
        }
        return CompileRequest.newBuilder().setSession(session).addModules(m).build();
    }

    static CreateBufferRequest f32(String session, long... dims) {
        CreateBufferRequest.Builder b = CreateBufferRequest.newBuilder().setSession(session).setDtype(DataType.DATA_TYPE_F32);
        for (long d : dims) {
            b.addDims(d);
        }
        return b.build();
    }

    static Arg buf(long handle) {
        return Arg.newBuilder().setBuffer(handle).build();
    }

    static Arg i32(int v) {
        return Arg.newBuilder().setScalar(Scalar.newBuilder().setI32(v)).build();
    }

    static Arg f32(float v) {
        return Arg.newBuilder().setScalar(Scalar.newBuilder().setF32(v)).build();
    }

    static Command launch(long event, long kernel, long global, Arg... args) {
        Launch.Builder l = Launch.newBuilder().setKernel(kernel).addGlobalDims(global);
        for (Arg a : args) {
            l.addArgs(a);
        }
        return Command.newBuilder().setEvent(event).setLaunch(l).build();
    }
}
