package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.Quote;
import dev.arrayd.devices.api.support.EntryPoints;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.IrValidator;

import java.util.List;
import java.util.Optional;

/**
 * What compiling a {@link KernelSource} means on CUDA, decided without touching CUDA (pure, tested):
 * CUDA C goes through NVRTC for {@code compute_XY} of each device, IR is validated, rendered to CUDA C
 * with its launch wrappers ({@link CudaIrAssembler}) and goes through NVRTC the same way, PTX is handed
 * to the driver's JIT as it is, everything else is refused with the reason.
 */
sealed interface CompilePlan {

    List<KernelSignature> entryPoints();

    /**
     * CUDA C or rendered IR: NVRTC compiles {@code unit} with {@code options} (the arch option is added per
     * device). {@code ir} holds the checked IR kernels in entry-point order (their launches are checked and
     * guarded); it is empty for CUDA C.
     */
    record Nvrtc(String unit, List<String> options, List<KernelSignature> entryPoints, List<CheckedKernel> ir)
            implements CompilePlan {

        public Nvrtc {
            options = List.copyOf(options);
            entryPoints = List.copyOf(entryPoints);
            ir = List.copyOf(ir);
        }

        /** NVRTC's options for one architecture, e.g. {@code compute_86}. */
        List<String> optionsFor(String arch) {
            List<String> all = new java.util.ArrayList<>(options);
            all.add("--gpu-architecture=" + arch);
            return List.copyOf(all);
        }

        /** The module's function for each entry point: its name for CUDA C, its launch wrapper's for IR. */
        List<String> symbols() {
            return entryPoints.stream().map(e -> ir.isEmpty() ? e.name() : CudaIrAssembler.ENTRY_PREFIX + e.name()).toList();
        }

        ModuleKey keyFor(String arch) {
            return ModuleKey.of(unit, optionsFor(arch), arch);
        }
    }

    /** PTX: loaded with {@code cuModuleLoadData}; entry points are looked up by their names. */
    record Ptx(String text, List<KernelSignature> entryPoints) implements CompilePlan {}

    /** Base NVRTC options: C++17 and line info (profilers and error messages can then name source lines). */
    List<String> NVRTC_OPTIONS = List.of("--std=c++17", "--generate-line-info");

    /** IR adds: no fused multiply-adds, IEEE division and square root, denormals kept (see {@link CudaIrAssembler}). */
    List<String> NVRTC_IR_OPTIONS = concat(NVRTC_OPTIONS, CudaIrAssembler.NVRTC_IR_OPTIONS);

    /**
     * @param nvrtcProblem why NVRTC cannot be used (empty when it can); PTX does not need it
     * @throws ArraydException INVALID_ARGUMENT for a dialect CUDA does not take, a bad IR module or bad
     *                         entry points, UNAVAILABLE for CUDA C or IR without NVRTC
     */
    static CompilePlan of(KernelSource source, Optional<String> nvrtcProblem) {
        Dialect dialect = source.dialect();
        switch (dialect) {
            case IR -> {
                return ir(source, nvrtcProblem);
            }
            case CUDA_C, PTX -> { }
            default -> throw ArraydException.invalid("dialect: " + dialect + " (expected: CUDA_C, PTX or IR for the cuda backend)");
        }
        EntryPoints.check(source.entryPoints(), "entryPoints");
        if (dialect == Dialect.PTX) {
            if (source.source().isBlank()) {
                throw ArraydException.invalid("source: empty PTX (expected: a PTX module with .entry " + source.entryPoints().getFirst().name() + ")");
            }
            return new Ptx(source.source(), source.entryPoints());
        }
        if (nvrtcProblem.isPresent()) {
            throw new ArraydException(ErrorCode.UNAVAILABLE, "cuda backend cannot compile CUDA C: " + nvrtcProblem.get()
                    + " (install the CUDA toolkit's NVRTC, or send PTX, which loads without it)");
        }
        return new Nvrtc(CudaSourceAssembler.assemble(source.source()), NVRTC_OPTIONS, source.entryPoints(), List.of());
    }

    /** An IR module: checked (every kernel, with the reason naming its place), then rendered with its wrappers. */
    private static CompilePlan ir(KernelSource source, Optional<String> nvrtcProblem) {
        List<CheckedKernel> checked = IrValidator.check(source.ir(), "ir");
        List<KernelSignature> entries = checked.stream().map(k -> k.kernel().signature()).toList();
        if (!source.entryPoints().isEmpty() && !source.entryPoints().equals(entries)) {
            throw ArraydException.invalid("entryPoints: " + Quote.list(source.entryPoints()) + " (expected: none, or the IR kernels' "
                    + "signatures " + Quote.list(entries) + ")");
        }
        EntryPoints.check(entries, "entryPoints");
        if (nvrtcProblem.isPresent()) {
            throw new ArraydException(ErrorCode.UNAVAILABLE, "cuda backend cannot compile IR kernels: " + nvrtcProblem.get()
                    + " (they are rendered to CUDA C, which needs the CUDA toolkit's NVRTC)");
        }
        return new Nvrtc(CudaIrAssembler.assemble(checked), NVRTC_IR_OPTIONS, entries, checked);
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new java.util.ArrayList<>(a);
        all.addAll(b);
        return List.copyOf(all);
    }

    /** {@code compute_86} for compute capability 8.6. */
    static String arch(int major, int minor) {
        return "compute_" + major + minor;
    }
}
