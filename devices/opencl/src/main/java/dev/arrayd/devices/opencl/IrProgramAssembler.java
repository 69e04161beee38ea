package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ir.CLikeRenderer;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.IrParam;
import dev.arrayd.devices.api.ir.OpenClRenderer;
import dev.arrayd.devices.api.ir.Stmt;

import java.util.ArrayList;
import java.util.List;

/**
 * Builds the program text of an IR module for the driver: {@link OpenClRenderer}'s output with each
 * kernel's parameter list replaced by arrayd's launch convention.
 *
 * <h2>Why the head is rewritten</h2>
 * The renderer emits a {@code __kernel} taking plain {@code __global T *} pointers, then
 * {@code arrayd_ext} and {@code arrayd_guard} as device buffers. arrayd addresses a buffer as a byte
 * offset inside a slab {@code cl_mem} (see {@link OpenClSourceAssembler} for why), and a per-launch
 * extents buffer would cost an upload per launch. A body function called by a generated entry, as for
 * native source, is ruled out by local arrays: OpenCL C allows {@code __local} variables only at
 * {@code __kernel} scope. So the renderer's kernel stays the entry, under the name
 * {@code arrayd_entry_<name>}, and only its parameter list changes:
 * <pre>{@code
 * __kernel void arrayd_entry_saxpy(const float p_a, __global uchar *arrayd_b1, ulong arrayd_o1, long arrayd_n1, ...,
 *                                  __global arrayd_i64 *arrayd_guard) {
 *     const __global float *p_x = (const __global float *)(arrayd_b1 + arrayd_o1);
 *     ...
 *     const arrayd_i64 arrayd_ext[4] = {0, arrayd_n1, arrayd_n2, 0};
 *     (the renderer's body, unchanged)
 * }
 * }</pre>
 * <ul>
 *   <li>A buffer parameter takes three kernel arguments: its slab, its byte offset and its element
 *       count (which becomes its {@code arrayd_ext} entry, a private constant the compiler folds); a
 *       scalar takes one, under the renderer's own name {@code p_<name>}.</li>
 *   <li>{@code arrayd_guard}, the two-word guard record, is a kernel argument only when the kernel kept
 *       a guard ({@link CheckedKernel#guardsEmitted()} &gt; 0); otherwise nothing refers to it.</li>
 *   <li>Local arrays are declared at the top of the kernel instead of where the renderer put them,
 *       zeroed by the group's items together, then a barrier: OpenCL leaves {@code __local} memory
 *       undefined, and it may still hold what another tenant's kernel left there. Zeros are what the
 *       interpreter and the CPU backend give.</li>
 *   <li>{@code #pragma OPENCL FP_CONTRACT OFF}: OpenCL C may fuse {@code a * b + c} by default; the
 *       IR rounds every operation once.</li>
 * </ul>
 * The renderer's output is deterministic, so is this text, which the binary cache keys on.
 */
final class IrProgramAssembler {

    static final String FILE = "arrayd-ir.cl";

    static final String HEADER = "#pragma OPENCL FP_CONTRACT OFF\n";

    private IrProgramAssembler() {}

    static String assemble(List<CheckedKernel> kernels) {
        OpenClRenderer renderer = new OpenClRenderer();
        String common = renderer.render(List.of());
        StringBuilder out = new StringBuilder(common.length() + 2048 * kernels.size());
        out.append("#line 1 \"").append(FILE).append("\"\n").append(HEADER).append(common);
        for (CheckedKernel k : kernels) {
            String rendered = renderer.render(List.of(k));
            if (!rendered.startsWith(common)) {
                throw new IllegalStateException("OpenClRenderer output of kernel " + k.name()
                        + " does not start with its module prelude (expected: prelude, then the kernel)");
            }
            out.append(entry(k, rendered.substring(common.length())));
        }
        return out.toString();
    }

    /** Kernel arguments of {@code k}'s entry: for each declared parameter, the index of its first one. */
    static int[] argIndexes(CheckedKernel k) {
        List<IrParam> params = k.kernel().params();
        int[] at = new int[params.size()];
        int next = 0;
        for (int i = 0; i < at.length; i++) {
            at[i] = next;
            next += params.get(i) instanceof IrParam.Buffer ? 3 : 1;
        }
        return at;
    }

    /** The index of the guard record's argument, or -1 when {@code k} kept no guard. */
    static int guardArg(CheckedKernel k) {
        if (k.guardsEmitted() == 0) {
            return -1;
        }
        int n = 0;
        for (IrParam p : k.kernel().params()) {
            n += p instanceof IrParam.Buffer ? 3 : 1;
        }
        return n;
    }

    /** One kernel's text as the renderer wrote it ({@code rendered}), with the entry's head and prologue. */
    private static String entry(CheckedKernel k, String rendered) {
        String marker = " void " + k.name() + "(";
        int headStart = rendered.indexOf("__kernel ");
        int nameAt = rendered.indexOf(marker, Math.max(0, headStart));
        int bodyAt = rendered.indexOf(") {\n", Math.max(0, nameAt));
        if (headStart < 0 || nameAt < 0 || bodyAt < 0 || rendered.substring(headStart, bodyAt).contains("\n")) {
            throw new IllegalStateException("OpenClRenderer output of kernel " + k.name()
                    + " has no one-line head \"__kernel ... void " + k.name() + "(...) {\"");
        }
        String body = rendered.substring(bodyAt + ") {\n".length());
        List<Stmt.LocalArray> locals = new ArrayList<>();
        for (Stmt s : k.kernel().body()) {
            if (s instanceof Stmt.LocalArray la) {
                locals.add(la);
                String line = "    " + localDeclaration(la) + "\n";
                int at = body.indexOf(line);
                if (at < 0 || body.indexOf(line, at + 1) >= 0) {
                    throw new IllegalStateException("OpenClRenderer output of kernel " + k.name()
                            + " does not declare local array " + la.name() + " exactly once as \"" + line.strip() + "\"");
                }
                body = body.substring(0, at) + body.substring(at + line.length());
            }
        }
        StringBuilder out = new StringBuilder(rendered.length() + 1024);
        out.append(rendered, 0, nameAt).append(" void ").append(OpenClSourceAssembler.ENTRY_PREFIX).append(k.name()).append('(')
                .append(parameters(k)).append(") {\n");
        prologue(k, locals, out);
        out.append(body);
        return out.toString();
    }

    private static String parameters(CheckedKernel k) {
        List<IrParam> params = k.kernel().params();
        List<String> out = new ArrayList<>();
        for (int i = 0; i < params.size(); i++) {
            switch (params.get(i)) {
                case IrParam.Buffer b -> out.add("__global uchar *arrayd_b" + i + ", ulong arrayd_o" + i + ", long arrayd_n" + i);
                case IrParam.Scalar s -> out.add("const " + OpenClSourceAssembler.scalarType(s.dtype()) + " p_" + s.name());
            }
        }
        if (guardArg(k) >= 0) {
            out.add("__global arrayd_i64 *arrayd_guard");
        }
        return String.join(", ", out);
    }

    private static void prologue(CheckedKernel k, List<Stmt.LocalArray> locals, StringBuilder out) {
        List<IrParam> params = k.kernel().params();
        List<String> ext = new ArrayList<>();
        for (int i = 0; i < params.size(); i++) {
            if (params.get(i) instanceof IrParam.Buffer b) {
                String pointer = (b.access() == Access.READ ? "const " : "") + "__global " + CLikeRenderer.storageType(b.dtype()) + " *";
                out.append("    ").append(pointer).append("p_").append(b.name()).append(" = (").append(pointer)
                        .append(")(arrayd_b").append(i).append(" + arrayd_o").append(i).append(");\n");
                ext.add("arrayd_n" + i);
            } else {
                ext.add("0");
            }
        }
        if (ext.isEmpty()) {
            ext.add("0");
        }
        out.append("    const arrayd_i64 arrayd_ext[").append(ext.size()).append("] = {").append(String.join(", ", ext))
                .append("};\n");
        if (locals.isEmpty()) {
            return;
        }
        // kernels with local arrays declare their local size (the validator requires it), so this is uniform
        out.append("    const ulong arrayd_li = get_local_id(0) + get_local_size(0) * (get_local_id(1)"
                + " + get_local_size(1) * get_local_id(2));\n");
        for (Stmt.LocalArray la : locals) {
            out.append("    ").append(localDeclaration(la)).append('\n');
        }
        long items = Math.max(1, k.kernel().groupSize());
        for (Stmt.LocalArray la : locals) {
            out.append("    for (ulong arrayd_z = arrayd_li; arrayd_z < ").append(la.size()).append("; arrayd_z += ")
                    .append(items).append(") l_").append(la.name()).append("[arrayd_z] = 0;\n");
        }
        out.append("    barrier(CLK_LOCAL_MEM_FENCE);\n");
    }

    /** The renderer's declaration of a local array (its storage types: f16 and bf16 as raw bits). */
    private static String localDeclaration(Stmt.LocalArray la) {
        return "__local " + CLikeRenderer.storageType(la.dtype()) + " l_" + la.name() + "[" + la.size() + "];";
    }
}
