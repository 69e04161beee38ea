package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.support.EntryPoints;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;

import java.util.List;

/**
 * Builds the program text the driver sees: {@link #HEADER}, the user's source under
 * {@code #line 1 "kernel.cl"} (build logs then carry the user's own line numbers), and one generated
 * {@code __kernel} wrapper per entry point under {@code #line 1 "arrayd-wrappers.cl"}.
 *
 * <h2>Why wrappers</h2>
 * arrayd addresses a buffer as a byte offset inside a slab ({@code cl_mem}). OpenCL can only hand a
 * kernel a whole {@code cl_mem} or a sub-buffer, and a sub-buffer's origin must be a multiple of
 * {@code CL_DEVICE_MEM_BASE_ADDR_ALIGN} (128 bytes on PoCL), which arrayd's ranges need not be.
 * So each buffer parameter travels as two kernel arguments, the slab and the byte offset, and the
 * wrapper adds them before calling the user's function:
 * <pre>{@code
 * __kernel void arrayd_entry_vadd(__global uchar *arrayd_b0, ulong arrayd_o0, ..., int arrayd_s3) {
 *     vadd((__global void *) (arrayd_b0 + arrayd_o0), ..., arrayd_s3);
 * }
 * }</pre>
 * No per-launch {@code clCreateSubBuffer}, any offset works, and the user's function keeps ordinary
 * typed pointers ({@code __global void *} converts to any of them).
 */
final class OpenClSourceAssembler {

    static final String USER_FILE = "kernel.cl";
    static final String WRAPPER_FILE = "arrayd-wrappers.cl";
    static final String ENTRY_PREFIX = "arrayd_entry_";

    static final String HEADER = """
            #if defined(cl_khr_fp64)
            #pragma OPENCL EXTENSION cl_khr_fp64 : enable
            #endif
            #if defined(cl_khr_fp16)
            #pragma OPENCL EXTENSION cl_khr_fp16 : enable
            #endif
            #if defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ >= 120
            #define ARRAYD_KERNEL static inline
            #else
            #define ARRAYD_KERNEL inline
            #endif
            """;

    private OpenClSourceAssembler() {}

    static String assemble(String userSource, List<KernelSignature> entryPoints) {
        StringBuilder out = new StringBuilder(HEADER.length() + userSource.length() + 512 * entryPoints.size());
        out.append(HEADER);
        out.append("#line 1 \"").append(USER_FILE).append("\"\n");
        out.append(userSource);
        if (!userSource.endsWith("\n")) {
            out.append('\n');
        }
        out.append("#line 1 \"").append(WRAPPER_FILE).append("\"\n");
        for (KernelSignature signature : entryPoints) {
            out.append(wrapper(signature));
        }
        return out.toString();
    }

    static void checkIdentifier(String name, String what) {
        EntryPoints.checkIdentifier(name, what);
    }

    /** The OpenCL C type of a scalar of {@code dtype} (f16 and bf16 travel as their raw bits). */
    static String scalarType(DType dtype) {
        return switch (dtype) {
            case F32 -> "float";
            case F64 -> "double";
            case I32 -> "int";
            case I64 -> "long";
            case U8 -> "uchar";
            case F16, BF16 -> "ushort";
        };
    }

    static String wrapper(KernelSignature signature) {
        checkIdentifier(signature.name(), "entry point");
        List<KernelParam> params = signature.params();
        StringBuilder decl = new StringBuilder(256);
        StringBuilder call = new StringBuilder(256);
        for (int i = 0; i < params.size(); i++) {
            KernelParam p = params.get(i);
            String sep = i == 0 ? "" : ", ";
            if (p.isBuffer()) {
                decl.append(sep).append("__global uchar *arrayd_b").append(i).append(", ulong arrayd_o").append(i);
                call.append(sep).append("(__global void *) (arrayd_b").append(i).append(" + arrayd_o").append(i).append(')');
            } else {
                decl.append(sep).append(scalarType(p.dtype())).append(" arrayd_s").append(i);
                call.append(sep).append("arrayd_s").append(i);
            }
        }
        return "__kernel void " + ENTRY_PREFIX + signature.name() + "(" + decl + ") {\n"
                + "    " + signature.name() + "(" + call + ");\n"
                + "}\n";
    }

    /** Kernel arguments the wrapper of {@code signature} takes: two per buffer, one per scalar. */
    static int[] argIndexes(KernelSignature signature) {
        int[] at = new int[signature.params().size()];
        int next = 0;
        for (int i = 0; i < at.length; i++) {
            at[i] = next;
            next += signature.params().get(i).isBuffer() ? 2 : 1;
        }
        return at;
    }
}
