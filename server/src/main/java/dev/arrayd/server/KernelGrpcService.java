package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.proto.v1.CompileRequest;
import dev.arrayd.proto.v1.CompileResponse;
import dev.arrayd.proto.v1.CompiledKernel;
import dev.arrayd.proto.v1.CompiledModule;
import dev.arrayd.proto.v1.DestroyKernelRequest;
import dev.arrayd.proto.v1.DestroyKernelResponse;
import dev.arrayd.proto.v1.KernelServiceGrpc;
import dev.arrayd.scheduler.CompileResult;
import dev.arrayd.scheduler.ModuleSpec;
import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.scheduler.Session;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;

/** Compiles kernels on the compile executor: compilers are slow and must not hold a transport thread. */
final class KernelGrpcService extends KernelServiceGrpc.KernelServiceImplBase {

    private final Scheduler scheduler;
    private final Executor compileExecutor;

    KernelGrpcService(Scheduler scheduler, Executor compileExecutor) {
        this.scheduler = scheduler;
        this.compileExecutor = compileExecutor;
    }

    @Override
    public void compile(CompileRequest req, StreamObserver<CompileResponse> out) {
        Calls.blocking(out, compileExecutor, () -> {
            Session s = scheduler.session(req.getSession());
            List<ModuleSpec> specs = new ArrayList<>();
            for (int i = 0; i < req.getModulesCount(); i++) {
                specs.add(ProtoCodec.module(req.getModules(i), "modules[" + i + "]"));
            }
            if (specs.isEmpty()) {
                throw ArraydException.invalid("modules: none (expected: at least one)");
            }
            CompileResponse.Builder b = CompileResponse.newBuilder();
            for (CompileResult r : scheduler.compile(s, specs)) {
                CompiledModule.Builder m = CompiledModule.newBuilder().setDiagnostics(r.diagnostics())
                        .addAllBackends(r.backends());
                for (var k : r.kernels()) {
                    m.addKernels(CompiledKernel.newBuilder().setName(k.name()).setKernel(k.handle()));
                }
                b.addModules(m);
            }
            return b.build();
        });
    }

    @Override
    public void destroyKernel(DestroyKernelRequest req, StreamObserver<DestroyKernelResponse> out) {
        Calls.unary(out, () -> {
            scheduler.destroyKernel(scheduler.session(req.getSession()), req.getKernel());
            return DestroyKernelResponse.getDefaultInstance();
        });
    }
}
