package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;

import java.util.List;
import java.util.Optional;

/**
 * What compiling a {@link KernelSource} means on CUDA, decided without touching CUDA (pure, tested):
 * CUDA C goes through NVRTC for {@code compute_XY} of each device, PTX is handed to the driver's JIT
 * as it is, everything else is refused with the reason.
 */
sealed interface CompilePlan {

    List<KernelSignature> entryPoints();

    /** CUDA C: NVRTC compiles {@code unit} with {@code options} (the arch option is added per device). */
    record Nvrtc(String unit, List<String> options, List<KernelSignature> entryPoints) implements CompilePlan {

        /** NVRTC's options for one architecture, e.g. {@code compute_86}. */
        List<String> optionsFor(String arch) {
            List<String> all = new java.util.ArrayList<>(options);
            all.add("--gpu-architecture=" + arch);
            return List.copyOf(all);
        }

        ModuleKey keyFor(String arch) {
            return ModuleKey.of(unit, optionsFor(arch), arch);
        }
    }

    /** PTX: loaded with {@code cuModuleLoadData}; entry points are looked up by their names. */
    record Ptx(String text, List<KernelSignature> entryPoints) implements CompilePlan {}

    /** Base NVRTC options: C++17 and line info (profilers and error messages can then name source lines). */
    List<String> NVRTC_OPTIONS = List.of("--std=c++17", "--generate-line-info");

    /**
     * @param nvrtcProblem why NVRTC cannot be used (empty when it can); PTX does not need it
     * @throws ArraydException UNIMPLEMENTED for IR (not rendered for CUDA yet), INVALID_ARGUMENT for a
     *                         dialect CUDA does not take or bad entry points, UNAVAILABLE for CUDA C without NVRTC
     */
    static CompilePlan of(KernelSource source, Optional<String> nvrtcProblem) {
        Dialect dialect = source.dialect();
        switch (dialect) {
            case IR -> throw new ArraydException(ErrorCode.UNIMPLEMENTED, "dialect: IR (expected: CUDA_C or PTX; the cuda backend"
                    + " does not compile IR kernels yet: rendering IR to CUDA C lands with the kernel IR work, until then"
                    + " send CUDA C or PTX with --allow-native-source)");
            case CUDA_C, PTX -> { }
            default -> throw ArraydException.invalid("dialect: " + dialect + " (expected: CUDA_C or PTX for the cuda backend)");
        }
        CudaSourceAssembler.checkEntryPoints(source.entryPoints());
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
        return new Nvrtc(CudaSourceAssembler.assemble(source.source()), NVRTC_OPTIONS, source.entryPoints());
    }

    /** {@code compute_86} for compute capability 8.6. */
    static String arch(int major, int minor) {
        return "compute_" + major + minor;
    }
}
