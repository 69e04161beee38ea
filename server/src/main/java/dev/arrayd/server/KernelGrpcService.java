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

    /** Most modules in one Compile request. */
    static final int MAX_MODULES = 64;
    /** Most bytes of one module's source (C, OpenCL C, CUDA C, PTX) or encoded IR. */
    static final int MAX_MODULE_BYTES = 4 << 20;

    private final Scheduler scheduler;
    private final SessionRegistry sessions;
    private final Executor compileExecutor;

    KernelGrpcService(Scheduler scheduler, SessionRegistry sessions, Executor compileExecutor) {
        this.scheduler = scheduler;
        this.sessions = sessions;
        // the call's tenant travels with the compilation to the compile thread
        this.compileExecutor = io.grpc.Context.currentContextExecutor(compileExecutor);
    }

    @Override
    public void compile(CompileRequest req, StreamObserver<CompileResponse> out) {
        Calls.blocking(out, compileExecutor, () -> {
            SessionLease l = sessions.lease(req.getSession());
            Session s = l.session;
            if (req.getModulesCount() > MAX_MODULES) {
                throw ArraydException.invalid("modules: " + req.getModulesCount() + " (expected: at most " + MAX_MODULES
                        + " per request)");
            }
            List<ModuleSpec> specs = new ArrayList<>();
            for (int i = 0; i < req.getModulesCount(); i++) {
                int size = req.getModules(i).getSerializedSize();
                if (size > MAX_MODULE_BYTES) {
                    throw ArraydException.invalid("modules[" + i + "]: " + size + " bytes (expected: at most "
                            + MAX_MODULE_BYTES + ")");
                }
                specs.add(ProtoCodec.module(req.getModules(i), "modules[" + i + "]"));
            }
            if (specs.isEmpty()) {
                throw ArraydException.invalid("modules: none (expected: at least one)");
            }
            l.usage.checkCompile();
            long t0 = sessions.clock().nanoTime();
            List<CompileResult> results;
            try {
                results = scheduler.compile(s, specs);
            } finally {
                l.usage.compiled(sessions.clock().nanoTime() - t0);
            }
            CompileResponse.Builder b = CompileResponse.newBuilder();
            for (CompileResult r : results) {
                CompiledModule.Builder m = CompiledModule.newBuilder().setDiagnostics(r.diagnostics())
                        .addAllBackends(r.backends()).setCacheHit(r.cacheHit());
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
            scheduler.destroyKernel(sessions.session(req.getSession()), req.getKernel());
            return DestroyKernelResponse.getDefaultInstance();
        });
    }
}
