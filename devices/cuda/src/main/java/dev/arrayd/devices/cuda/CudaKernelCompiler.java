package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CompileException;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelCompiler;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.ir.CheckedKernel;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;
import jcuda.driver.JITOptions;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Compiles CUDA C with NVRTC (for {@code compute_XY} of each open device's compute capability) and loads
 * PTX with the driver's JIT, into every open device's context. IR modules are validated, rendered to CUDA
 * C with a launch wrapper per kernel ({@link CudaIrAssembler}) and compiled the same way; their kernels
 * keep the checked IR, so each launch is checked and its guard words read back ({@link IrLaunch}).
 *
 * <p>NVRTC runs in-process, on a thread of its own, bounded by the compile timeout: past it the client
 * gets DEADLINE_EXCEEDED at once, and the abandoned compilation finishes (and is dropped) in the
 * background, since NVRTC cannot be interrupted. Results are cached by content hash ({@link ModuleCache}).
 * NVRTC's log is the {@link CompileException}'s diagnostics, naming the user's lines as
 * {@code kernel.cu(LINE)}; PTX JIT errors come from the driver's error log.
 */
final class CudaKernelCompiler implements KernelCompiler {

    private static final int CU_JIT_ERROR_LOG_BUFFER = 5;
    private static final int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
    private static final int CU_JIT_INFO_LOG_BUFFER = 3;
    private static final int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
    private static final int JIT_LOG_BYTES = 16 * 1024;

    private final Duration timeout;
    private final Supplier<Optional<String>> unavailableReason;
    private final Supplier<Optional<String>> nvrtcProblem;
    private final Supplier<NvrtcLibrary> nvrtcLibrary;
    private final Supplier<List<CudaDevice>> devices;
    private final ModuleCache cache;

    CudaKernelCompiler(CudaOptions options, Supplier<Optional<String>> unavailableReason, Supplier<Optional<String>> nvrtcProblem,
                       Supplier<NvrtcLibrary> nvrtcLibrary, Supplier<List<CudaDevice>> devices) {
        this.timeout = options.compileTimeout();
        this.unavailableReason = unavailableReason;
        this.nvrtcProblem = nvrtcProblem;
        this.nvrtcLibrary = nvrtcLibrary;
        this.devices = devices;
        this.cache = new ModuleCache(options.moduleCacheEntries());
    }

    /** PTX always; CUDA C and IR only where NVRTC loads (both are compiled by it). */
    @Override
    public Set<Dialect> dialects() {
        return nvrtcProblem.get().isEmpty() ? Set.of(Dialect.CUDA_C, Dialect.PTX, Dialect.IR) : Set.of(Dialect.PTX);
    }

    ModuleCache cache() {
        return cache;
    }

    @Override
    public KernelModule compile(KernelSource source) {
        Optional<String> reason = unavailableReason.get();
        if (reason.isPresent()) {
            throw new ArraydException(ErrorCode.UNAVAILABLE, "cuda backend cannot compile: " + reason.get());
        }
        CompilePlan plan = CompilePlan.of(source, nvrtcProblem.get());
        List<CudaDevice> open = devices.get();
        if (open.isEmpty()) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, "cuda backend: no device open (expected: openDevices before compile)");
        }
        // one PTX per architecture among the open devices; the same text for devices of the same one
        Map<String, String> ptxByArch = new LinkedHashMap<>();
        Map<String, List<String>> namesByArch = new LinkedHashMap<>();
        StringBuilder log = new StringBuilder();
        for (CudaDevice d : open) {
            String arch = d.facts().arch();
            if (ptxByArch.containsKey(arch)) {
                continue;
            }
            switch (plan) {
                case CompilePlan.Ptx ptx -> {
                    ptxByArch.put(arch, ptx.text());
                    namesByArch.put(arch, ptx.entryPoints().stream().map(KernelSignature::name).toList());
                }
                case CompilePlan.Nvrtc nvrtc -> {
                    Nvrtc.Output out = nvrtc(nvrtc, arch);
                    ptxByArch.put(arch, out.ptx());
                    namesByArch.put(arch, out.loweredNames());
                    if (!out.log().isBlank()) {
                        log.append(out.log()).append('\n');
                    }
                }
            }
        }
        List<CheckedKernel> ir = plan instanceof CompilePlan.Nvrtc n ? n.ir() : List.of();
        return load(plan.entryPoints(), ir, open, ptxByArch, namesByArch, log.toString().strip());
    }

    private Nvrtc.Output nvrtc(CompilePlan.Nvrtc plan, String arch) {
        ModuleKey key = plan.keyFor(arch);
        List<String> names = plan.symbols();
        ModuleCache.Entry cached = cache.get(key);
        if (cached != null) {
            // lowered names are a function of the same text, so they are cached beside it
            return new Nvrtc.Output(cached.ptx(), cached.log(), cached.loweredNames());
        }
        NvrtcLibrary library = nvrtcLibrary.get();
        CompletableFuture<Nvrtc.Output> result = new CompletableFuture<>();
        Thread compiler = new Thread(() -> {
            try {
                result.complete(Nvrtc.compile(library, plan.unit(), plan.optionsFor(arch), names));
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        }, "arrayd-cuda-nvrtc");
        compiler.setDaemon(true);
        compiler.start();
        Nvrtc.Output out;
        try {
            out = result.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new ArraydException(ErrorCode.DEADLINE_EXCEEDED, "NVRTC: still compiling after " + timeout.toMillis()
                    + " ms (expected: within the compile timeout " + timeout + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ArraydException(ErrorCode.CANCELLED, "interrupted while NVRTC was compiling", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof ArraydException a) {
                throw a;
            }
            throw new ArraydException(ErrorCode.INTERNAL, "NVRTC failed: " + e.getCause(), e.getCause());
        }
        cache.put(key, new ModuleCache.Entry(out.ptx(), out.log(), out.loweredNames()));
        return out;
    }

    /** @param ir the checked IR kernels in entry-point order, or empty for native source */
    private static KernelModule load(List<KernelSignature> entryPoints, List<CheckedKernel> ir, List<CudaDevice> open,
                                     Map<String, String> ptxByArch,
                                     Map<String, List<String>> namesByArch, String log) {
        int slots = open.stream().mapToInt(d -> d.id().ordinal()).max().orElse(-1) + 1;
        CudaDevice[] byOrdinal = new CudaDevice[slots];
        CUmodule[] modules = new CUmodule[slots];
        CUfunction[][] functions = new CUfunction[entryPoints.size()][slots];
        StringBuilder warnings = new StringBuilder(log);
        try {
            for (CudaDevice d : open) {
                int o = d.id().ordinal();
                byOrdinal[o] = d;
                String arch = d.facts().arch();
                d.makeCurrent();
                CUmodule module = new CUmodule();
                JITOptions jit = new JITOptions();
                jit.putBytes(CU_JIT_ERROR_LOG_BUFFER, new byte[JIT_LOG_BYTES]);
                jit.putInt(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, JIT_LOG_BYTES);
                jit.putBytes(CU_JIT_INFO_LOG_BUFFER, new byte[JIT_LOG_BYTES]);
                jit.putInt(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, JIT_LOG_BYTES);
                byte[] ptx = (ptxByArch.get(arch) + "\0").getBytes(java.nio.charset.StandardCharsets.UTF_8);
                int result = JCudaDriver.cuModuleLoadDataJIT(module, jcuda.Pointer.to(ptx), jit);
                if (result != CudaErrors.CUDA_SUCCESS) {
                    String jitLog = cString(jit.getBytes(CU_JIT_ERROR_LOG_BUFFER));
                    throw new CompileException("the CUDA driver could not load the PTX on " + d.id() + ": "
                            + CudaErrors.message("cuModuleLoadDataEx", result, CudaErrors.name(result)), jitLog);
                }
                modules[o] = module;
                String info = cString(jit.getBytes(CU_JIT_INFO_LOG_BUFFER));
                if (!info.isBlank() && warnings.indexOf(info) < 0) {
                    warnings.append(warnings.isEmpty() ? "" : "\n").append(info);
                }
                List<String> names = namesByArch.get(arch);
                for (int k = 0; k < entryPoints.size(); k++) {
                    CUfunction f = new CUfunction();
                    int r = JCudaDriver.cuModuleGetFunction(f, module, names.get(k));
                    if (r != CudaErrors.CUDA_SUCCESS) {
                        throw ArraydException.invalid("entryPoints[" + k + "]: " + entryPoints.get(k).name()
                                + " (expected: a kernel of the module; " + CudaErrors.message("cuModuleGetFunction", r, CudaErrors.name(r)) + ")");
                    }
                    functions[k][o] = f;
                }
            }
        } catch (RuntimeException e) {
            for (int o = 0; o < slots; o++) {
                if (modules[o] != null) {
                    byOrdinal[o].makeCurrent();
                    JCudaDriver.cuModuleUnload(modules[o]);
                }
            }
            throw e;
        }
        CudaKernelModule module = new CudaKernelModule(byOrdinal, modules, warnings.toString());
        List<Kernel> kernels = new ArrayList<>();
        for (int k = 0; k < entryPoints.size(); k++) {
            kernels.add(new CudaKernel(entryPoints.get(k), module, functions[k], ir.isEmpty() ? null : ir.get(k)));
        }
        module.setKernels(kernels);
        return module;
    }

    private static String cString(byte[] bytes) {
        if (bytes == null) {
            return "";
        }
        int n = 0;
        while (n < bytes.length && bytes[n] != 0) {
            n++;
        }
        return new String(bytes, 0, n, java.nio.charset.StandardCharsets.UTF_8).strip();
    }
}
