package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelCompiler;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.Quote;
import dev.arrayd.devices.api.ir.IrValidator;
import dev.arrayd.devices.api.support.EntryPoints;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Compiling modules into a session's kernel handles: the checks (native source allowed, entry points,
 * IR), the backends each module is built for, one compiler call per backend, and the reference count
 * that keeps a module loaded while a handle or a launch uses it ({@link ModuleRef}).
 */
final class KernelRegistry {

    private final SchedulerContext ctx;
    private final Map<String, KernelCompiler> compilers;

    KernelRegistry(SchedulerContext ctx, Map<String, KernelCompiler> compilers) {
        this.ctx = ctx;
        this.compilers = Map.copyOf(compilers);
    }

    /** Compiles modules; all of them or none (a failure unloads what was already built). Blocking. */
    List<CompileResult> compile(Session s, List<ModuleSpec> modules) {
        ctx.checkSession(s);
        if (modules.isEmpty()) {
            throw ArraydException.invalid("modules: none (expected: at least one)");
        }
        List<CompileResult> results = new ArrayList<>();
        List<ModuleRef> built = new ArrayList<>();
        try {
            List<List<String>> backends = new ArrayList<>();
            for (int m = 0; m < modules.size(); m++) {
                backends.add(backendsFor(modules.get(m), "modules[" + m + "]"));
            }
            List<Map<String, KernelModule>> compiled = compileByBackend(modules, backends);
            for (int m = 0; m < modules.size(); m++) {
                results.add(register(s, modules.get(m), backends.get(m), compiled.get(m), built));
            }
        } catch (RuntimeException e) {
            for (CompileResult r : results) {
                for (CompiledKernel k : r.kernels()) {
                    s.kernels.remove(k.handle());
                }
            }
            for (ModuleRef ref : built) {
                while (ref.refCount() > 0) {
                    ref.release();
                }
            }
            throw e;
        }
        return results;
    }

    /**
     * Forgets a kernel handle; its module unloads once no handle and no launch uses it. Marked destroyed under the
     * submit lock: a submission checks that mark and retains the module under the lock (either side), so it either
     * retains the module before this release or is refused NOT_FOUND.
     */
    void destroy(Session s, long handle) {
        CompiledKernel k = s.kernels.remove(handle);
        if (k == null) {
            throw ArraydException.notFound("kernel " + Handles.format(handle) + " (not found in this session)");
        }
        ctx.lockSubmit();
        try {
            k.destroyed = true;
        } finally {
            ctx.unlockSubmit();
        }
        k.module().release();
    }

    /** Checks a module (native source allowed, signatures, IR) and picks the backends it is compiled for. */
    private List<String> backendsFor(ModuleSpec spec, String where) {
        KernelSource src = spec.source();
        if (src.dialect().isNative() && !ctx.config().allowNativeSource()) {
            throw new ArraydException(ErrorCode.PERMISSION_DENIED, where + ".dialect: " + src.dialect()
                    + " is native source, which can do anything the daemon can; the daemon was started without"
                    + " --allow-native-source");
        }
        EntryPoints.check(src.entryPoints(), where + ".entry_points");
        if (src.ir() != null) {
            // once here, so that a bad module is named by its place in the request; backends check again
            IrValidator.check(src.ir(), where + ".ir");
        }
        List<String> backends = new ArrayList<>();
        if (spec.backend() != null && !spec.backend().isEmpty()) {
            KernelCompiler c = compilers.get(spec.backend());
            if (c == null) {
                throw ArraydException.notFound(where + ".backend: " + Quote.string(spec.backend()) + " (not available; available: "
                        + compilers.keySet() + ")");
            }
            if (!c.dialects().contains(src.dialect())) {
                throw ArraydException.invalid(where + ".dialect: " + src.dialect() + " (backend " + spec.backend()
                        + " compiles " + c.dialects() + ")");
            }
            backends.add(spec.backend());
        } else {
            for (var e : compilers.entrySet()) {
                if (e.getValue().dialects().contains(src.dialect())) {
                    backends.add(e.getKey());
                }
            }
            backends.sort(null);
            if (backends.isEmpty()) {
                throw ArraydException.invalid(where + ".dialect: " + src.dialect()
                        + " (no available backend compiles it; backends: " + compilers.keySet() + ")");
            }
        }
        return backends;
    }

    /**
     * Compiles every module for each of its backends, one {@link KernelCompiler#compileAll} call per
     * backend (a backend may build them in one compiler run, and concurrent requests for the same
     * module share one build). All or nothing: on failure every module already built is closed.
     */
    private List<Map<String, KernelModule>> compileByBackend(List<ModuleSpec> modules, List<List<String>> backends) {
        List<Map<String, KernelModule>> out = new ArrayList<>();
        for (int m = 0; m < modules.size(); m++) {
            out.add(new HashMap<>());
        }
        Set<String> all = new TreeSet<>();
        backends.forEach(all::addAll);
        try {
            for (String backend : all) {
                List<Integer> which = new ArrayList<>();
                for (int m = 0; m < modules.size(); m++) {
                    if (backends.get(m).contains(backend)) {
                        which.add(m);
                    }
                }
                long t0 = System.nanoTime();
                List<KernelModule> kms;
                try {
                    kms = compilers.get(backend).compileAll(which.stream().map(m -> modules.get(m).source()).toList());
                } catch (RuntimeException e) {
                    ctx.observer().compiled(backend, System.nanoTime() - t0, false);
                    throw e;
                }
                long each = (System.nanoTime() - t0) / which.size();
                for (int j = 0; j < which.size(); j++) {
                    ctx.observer().compiled(backend, each, true);
                    out.get(which.get(j)).put(backend, kms.get(j));
                }
            }
        } catch (RuntimeException e) {
            out.forEach(map -> map.values().forEach(KernelModule::close));
            throw e;
        }
        return out;
    }

    /** A kernel handle per entry point of a compiled module, in session {@code s}. */
    private CompileResult register(Session s, ModuleSpec spec, List<String> backends, Map<String, KernelModule> byName,
            List<ModuleRef> built) {
        KernelSource src = spec.source();
        List<KernelModule> mods = new ArrayList<>();
        StringBuilder diagnostics = new StringBuilder();
        boolean cacheHit = true;
        for (String backend : backends) {
            KernelModule km = byName.get(backend);
            mods.add(km);
            cacheHit &= km.cacheHit();
            if (!km.diagnostics().isBlank()) {
                diagnostics.append(km.diagnostics());
            }
        }
        ModuleRef ref = new ModuleRef(mods, src.entryPoints().size());
        built.add(ref);
        List<CompiledKernel> kernels = new ArrayList<>();
        for (KernelSignature sig : src.entryPoints()) {
            Map<String, Kernel> byBackend = new HashMap<>();
            for (KernelModule km : mods) {
                for (Kernel k : km.kernels()) {
                    if (k.name().equals(sig.name())) {
                        byBackend.put(k.backend(), k);
                    }
                }
            }
            CompiledKernel ck = new CompiledKernel(Handles.next(), sig, byBackend, ref);
            s.kernels.put(ck.handle(), ck);
            kernels.add(ck);
        }
        return new CompileResult(kernels, diagnostics.toString(), backends, cacheHit);
    }
}
