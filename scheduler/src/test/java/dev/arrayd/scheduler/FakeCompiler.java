package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CompileException;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelCompiler;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/** "Compiles" by looking the source text up in a table of Java kernel bodies. Counts loaded modules. */
final class FakeCompiler implements KernelCompiler {

    private final Map<String, FakeKernel.Body> bodies;
    final AtomicInteger loaded = new AtomicInteger();

    FakeCompiler(Map<String, FakeKernel.Body> bodies) {
        this.bodies = bodies;
    }

    @Override
    public Set<Dialect> dialects() {
        return EnumSet.of(Dialect.C);
    }

    @Override
    public KernelModule compile(KernelSource source) {
        List<Kernel> kernels = new ArrayList<>();
        for (KernelSignature sig : source.entryPoints()) {
            FakeKernel.Body body = bodies.get(sig.name());
            if (body == null || !source.source().contains(sig.name())) {
                throw new CompileException("fake compile failed", "1: error: no kernel '" + sig.name() + "'");
            }
            kernels.add(new FakeKernel(sig, body));
        }
        loaded.incrementAndGet();
        return new KernelModule() {
            private boolean closed;

            @Override
            public List<Kernel> kernels() {
                return kernels;
            }

            @Override
            public String diagnostics() {
                return "";
            }

            @Override
            public synchronized void close() {
                if (closed) {
                    throw new ArraydException(dev.arrayd.devices.api.ErrorCode.INTERNAL, "module closed twice");
                }
                closed = true;
                loaded.decrementAndGet();
            }
        };
    }
}
