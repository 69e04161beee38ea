package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ir.CLikeRenderer;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.CudaRenderer;
import dev.arrayd.devices.api.ir.IrParam;

import java.util.List;

/**
 * What NVRTC is given for an IR module: the {@link CudaRenderer}'s output with each kernel turned into
 * an inlined device function, then one launch wrapper per kernel that is the module's entry point.
 *
 * <h2>Why a wrapper</h2>
 * The rendered kernel takes, after its declared parameters, {@code arrayd_ext} (the element count of
 * every parameter, by position) and {@code arrayd_guard} (two 64-bit words, zero before the launch) as
 * device pointers. This backend passes every argument by value through {@code cuLaunchKernel}, buffers
 * as their device addresses ({@link PackedArgs}). So the wrapper takes the declared parameters exactly
 * as a native kernel of the same signature would (storage types at the widths {@link PackedArgs}
 * packs), the extents as one by-value struct ({@code arrayd_ext_<name>}, one 64-bit count per
 * parameter: no upload per launch, they sit in the kernel's parameter space), and the guard words as a
 * pointer into the launching stream's {@link GuardSlots}; it calls the rendered body with them. The wrapper
 * of kernel {@code k} is the module's function {@code arrayd_entry_k} ({@link #ENTRY_PREFIX}).
 *
 * <p>Layout: the rendered text under {@code #line 1 "ir.cu"} and the wrappers under
 * {@code #line 1 "arrayd-launch.cu"}, so an NVRTC complaint (an arrayd bug, never the client's) names
 * the generated part it is about. Deterministic: the module cache keys on this text.
 */
final class CudaIrAssembler {

    static final String IR_FILE = "ir.cu";
    static final String WRAPPER_FILE = "arrayd-launch.cu";
    static final String BODY_PREFIX = "arrayd_body_";
    static final String EXT_PREFIX = "arrayd_ext_";
    /**
     * The entry point of IR kernel {@code k} is {@code arrayd_entry_k}: an IR name may be any identifier, and one
     * that CUDA's headers declare ({@code min}, {@code max}, {@code sin}, ...) would not compile as an
     * {@code extern "C"} function of that name.
     */
    static final String ENTRY_PREFIX = "arrayd_entry_";

    /**
     * IR kernels compute as the interpreter does: no contraction of a * b + c into a fused multiply-add
     * (NVRTC's default is to contract), IEEE division and square root, denormals kept (NVRTC's defaults).
     */
    static final List<String> NVRTC_IR_OPTIONS = List.of("--fmad=false", "--prec-div=true", "--prec-sqrt=true",
            "--ftz=false");

    private CudaIrAssembler() {}

    /** The unit for {@code kernels}, which {@link dev.arrayd.devices.api.ir.IrValidator} has checked. */
    static String assemble(List<CheckedKernel> kernels) {
        String rendered = new CudaRenderer().render(kernels);
        for (CheckedKernel k : kernels) {
            rendered = asDeviceFunction(rendered, k.name());
        }
        StringBuilder out = new StringBuilder(rendered.length() + 512 * kernels.size());
        out.append("#line 1 \"").append(IR_FILE).append("\"\n").append(rendered);
        out.append("#line 1 \"").append(WRAPPER_FILE).append("\"\n");
        for (CheckedKernel k : kernels) {
            out.append(wrapper(k));
        }
        return out.toString();
    }

    /** The renderer's {@code extern "C" __global__ void NAME(} becomes an inlined device function. */
    static String asDeviceFunction(String rendered, String name) {
        return CLikeRenderer.replaceKernelHead(rendered, "extern \"C\" __global__ void " + name + "(",
                "static __device__ __forceinline__ void " + BODY_PREFIX + name + "(", "CUDA");
    }

    /** The entry point {@code name}: declared parameters, the extents struct, the guard words. */
    static String wrapper(CheckedKernel k) {
        List<IrParam> params = k.kernel().params();
        String name = k.name();
        StringBuilder c = new StringBuilder(512);
        c.append("struct ").append(EXT_PREFIX).append(name).append(" { arrayd_i64 n[").append(Math.max(1, params.size()))
                .append("]; };\n");
        c.append("extern \"C\" __global__ void ");
        long group = k.kernel().groupSize();
        if (group > 0) {
            // a declared local size is the only block size this kernel is ever launched with
            c.append("__launch_bounds__(").append(group).append(") ");
        }
        c.append(ENTRY_PREFIX).append(name).append('(');
        for (int i = 0; i < params.size(); i++) {
            IrParam p = params.get(i);
            switch (p) {
                case IrParam.Buffer b -> c.append(b.access() == Access.READ ? "const " : "").append(CLikeRenderer.storageType(b.dtype()))
                        .append(" *a").append(i);
                case IrParam.Scalar s -> c.append("const ").append(CLikeRenderer.storageType(s.dtype())).append(" a").append(i);
            }
            c.append(", ");
        }
        c.append("const struct ").append(EXT_PREFIX).append(name).append(" arrayd_ext, arrayd_i64 *arrayd_guard) {\n");
        c.append("    ").append(BODY_PREFIX).append(name).append('(');
        for (int i = 0; i < params.size(); i++) {
            c.append('a').append(i).append(", ");
        }
        c.append("arrayd_ext.n, arrayd_guard);\n}\n");
        return c.toString();
    }
}
