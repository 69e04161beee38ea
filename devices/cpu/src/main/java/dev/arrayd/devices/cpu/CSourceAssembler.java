package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.ir.CRenderer;
import dev.arrayd.devices.api.ir.LaneBlocks;
import dev.arrayd.devices.api.support.EntryPoints;
import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;

import java.util.List;

/**
 * Builds the translation unit gcc sees. For C source: {@link #MAIN_FILE} holds {@link #HEADER}, then
 * {@code #include "kernel.c"}, then one trampoline per entry point under
 * {@code #line 1 "arrayd-trampolines.c"} (so a mismatch between a declared signature and the user's
 * function is reported against the trampoline, not a user line); the user's text is written unchanged
 * to its own file {@link #USER_FILE}, so gcc's diagnostics carry the user's line numbers and quote the
 * user's own lines. For IR: one file, the header and the rendered module, then the trampolines.
 */
final class CSourceAssembler {

    /** The user's C source, unchanged: gcc reports (and quotes) the user's lines from it. */
    static final String USER_FILE = "kernel.c";
    /** The file gcc compiles: the header, the user's file or the rendered IR, the trampolines. */
    static final String MAIN_FILE = "arrayd-unit.c";
    static final String TRAMPOLINE_FILE = "arrayd-trampolines.c";
    static final String IR_FILE = "ir.c";
    static final String TRAMPOLINE_PREFIX = "arrayd_run_";

    /** Longs in one range block: lo[3], hi[3], global size[3], local size[3]. */
    static final int RANGE_LONGS = 12;

    static final String HEADER = """
            #include <stdint.h>
            #include <stddef.h>
            #include <math.h>
            #include <string.h>
            typedef struct arrayd_item_t {
                int64_t global_id[3];
                int64_t global_size[3];
                int64_t local_id[3];
                int64_t local_size[3];
                int64_t group_id[3];
            } arrayd_item_t;
            #define ARRAYD_KERNEL static inline
            #ifndef ARRAYD_RUN
            #define ARRAYD_RUN(name) arrayd_run_##name
            #endif
            #define ARRAYD_ITEM const arrayd_item_t *arrayd_item__
            #define arrayd_global_id(d) (arrayd_item__->global_id[(d)])
            #define arrayd_global_size(d) (arrayd_item__->global_size[(d)])
            #define arrayd_local_id(d) (arrayd_item__->local_id[(d)])
            #define arrayd_local_size(d) (arrayd_item__->local_size[(d)])
            #define arrayd_group_id(d) (arrayd_item__->group_id[(d)])
            """;

    private CSourceAssembler() {}

    /** The main file for C source; it includes {@link #USER_FILE}, which holds the user's text as given. */
    static String assemble(List<KernelSignature> entryPoints) {
        StringBuilder out = new StringBuilder(HEADER.length() + 1024 * entryPoints.size());
        out.append(HEADER);
        out.append("#include \"").append(USER_FILE).append("\"\n");
        out.append("#line 1 \"").append(TRAMPOLINE_FILE).append("\"\n");
        for (KernelSignature signature : entryPoints) {
            out.append(trampoline(signature, false));
        }
        return out.toString();
    }

    /**
     * The unit for rendered IR: the header, the C renderer's output (under {@code #line 1 "ir.c"}, so
     * a gcc complaint about it, which would be an arrayd bug, points at the rendered text) and one
     * trampoline per kernel passing the extents and guard record after the declared arguments.
     */
    static String assembleIr(String rendered, List<KernelSignature> entryPoints, List<Boolean> phased) {
        return assembleIr(rendered, entryPoints, phased, java.util.Collections.nCopies(entryPoints.size(), false),
                java.util.Collections.nCopies(entryPoints.size(), ""), java.util.Collections.nCopies(entryPoints.size(), false));
    }

    /**
     * {@link #assembleIr(String, List, List)} where {@code hoisted.get(i)} says kernel {@code i} has guards checked
     * per block ({@code dev.arrayd.devices.api.ir.GuardHoisting}): its trampoline asks the predicate once per
     * range and runs the kernel with or without those guards; {@code prefixes.get(i)} is what kernel {@code i} is
     * marked with ({@code CRenderer.functionPrefix}: relaxed floating point, narrow vectors): its trampolines, into
     * which it inlines, are marked the same; {@code lanes.get(i)} says the rendered module has kernel {@code i}'s lane
     * form ({@code dev.arrayd.devices.api.ir.LaneBlocks}), which its trampoline then runs for whole blocks of items.
     */
    static String assembleIr(String rendered, List<KernelSignature> entryPoints, List<Boolean> phased, List<Boolean> hoisted,
            List<String> prefixes, List<Boolean> lanes) {
        for (KernelSignature e : entryPoints) {
            rendered = renameKernel(rendered, e.name());
        }
        StringBuilder out = new StringBuilder(HEADER.length() + rendered.length() + 1024 * entryPoints.size());
        out.append(HEADER);
        out.append("#line 1 \"").append(IR_FILE).append("\"\n");
        out.append(rendered);
        out.append("#line 1 \"").append(TRAMPOLINE_FILE).append("\"\n");
        for (int i = 0; i < entryPoints.size(); i++) {
            String prefix = prefixes.get(i);
            out.append(phased.get(i) ? groupTrampoline(entryPoints.get(i), hoisted.get(i), prefix)
                    : trampoline(entryPoints.get(i), true, hoisted.get(i), prefix, lanes.get(i)));
        }
        return out.toString();
    }

    /**
     * Prefix of the rendered IR kernel functions: an IR kernel may be named like a C library function
     * ({@code pow}, {@code exp}) that its own body calls, so its C function must not take the plain name.
     */
    static final String IR_KERNEL_PREFIX = "arrayd_k_";

    /** The renderer's {@code ARRAYD_KERNEL void NAME(} (once per kernel) gets {@link #IR_KERNEL_PREFIX}. */
    static String renameKernel(String rendered, String name) {
        return dev.arrayd.devices.api.ir.CLikeRenderer.replaceKernelHead(rendered, "ARRAYD_KERNEL void " + name + "(",
                "ARRAYD_KERNEL void " + IR_KERNEL_PREFIX + name + "(", "C");
    }

    static void checkIdentifier(String name, String what) {
        EntryPoints.checkIdentifier(name, what);
    }

    /**
     * The exported {@code void arrayd_run_<name>(const int64_t *range, void **args)}: loops z / y / x
     * over {@code [lo, hi)} with x innermost, so that once the user's static inline function is inlined
     * gcc can vectorize the x loop. The item is rebuilt per iteration from loop-local values, which lets
     * gcc scalarize it and drop the ids the kernel never reads (the divisions included).
     */
    static String trampoline(KernelSignature signature) {
        return trampoline(signature, false);
    }

    /** With {@code ir}, {@code args[n]} is the extents array and {@code args[n + 1]} the guard record. */
    static String trampoline(KernelSignature signature, boolean ir) {
        return trampoline(signature, ir, false);
    }

    /**
     * With {@code hoisted}, the range is checked once by {@code arrayd_ok_<name>} (every hoisted access in bounds
     * for every work-item of the range): the loops then call the kernel with {@code arrayd_ok = 1}, which gcc
     * inlines without those guards, otherwise {@code arrayd_guarded_<name>} runs the range with them. That
     * fallback is a function of its own, never inlined: a block fails the check only at an edge of the grid or
     * just before an out-of-bounds access is reported, and a second copy of the kernel inside the trampoline
     * made gcc compile the fast loops worse (a softmax ran 1.1-1.2x slower).
     */
    static String trampoline(KernelSignature signature, boolean ir, boolean hoisted) {
        return trampoline(signature, ir, hoisted, "");
    }

    /** {@code prefix} goes before each function defined (e.g. {@code CRenderer.RELAXED}). */
    static String trampoline(KernelSignature signature, boolean ir, boolean hoisted, String prefix) {
        return trampoline(signature, ir, hoisted, prefix, false);
    }

    /**
     * With {@code lanes}, the loops that run without guards (all of them when nothing is {@code hoisted}; else those
     * of {@code arrayd_lane_run_<name>}, never inlined, which the check calls) call the kernel's lane form
     * {@code arrayd_lanes_<name>} for each whole block of {@link LaneBlocks#WIDTH} items along x and the kernel
     * itself for the rest of the row.
     */
    static String trampoline(KernelSignature signature, boolean ir, boolean hoisted, String prefix, boolean lanes) {
        checkIdentifier(signature.name(), "entry point");
        List<KernelParam> params = signature.params();
        StringBuilder c = new StringBuilder(512);
        String guarded = "arrayd_guarded_" + signature.name();
        String laneRun = "arrayd_lane_run_" + signature.name();
        if (hoisted) {
            noinline(c, prefix, guarded, params, ir, () -> loops(c, signature, ir, ", 0"));
            if (lanes) {
                // a function of its own: inside the check's branch gcc neither unrolls the lane loops nor keeps the
                // lanes' variables in registers (measured: half the speed for a 2 x 8 block matmul)
                noinline(c, prefix, laneRun, params, ir, () -> laneLoops(c, signature, ", 1"));
            }
        }
        // IR trampolines are named through ARRAYD_RUN so that a batch can give each module its own prefix
        c.append(prefix).append("void ").append(ir ? "ARRAYD_RUN(" + signature.name() + ")" : TRAMPOLINE_PREFIX + signature.name())
                .append("(const int64_t *range, void **args) {\n");
        head(c, params, ir);
        if (lanes) {
            if (!hoisted) {
                laneLoops(c, signature, "");
            } else {
                checked(c, signature, "gs0, gs1, gs2", () -> c.append("        ").append(laneRun).append("(range, args);\n"));
            }
        } else if (!hoisted) {
            loops(c, signature, ir, "");
        } else {
            checked(c, signature, "gs0, gs1, gs2", () -> loops(c, signature, ir, ", 1"));
        }
        c.append("}\n");
        return c.toString();
    }

    /** A function {@code name(range, args)} never inlined: the parameters unpacked ({@link #head}), then {@code body}. */
    private static void noinline(StringBuilder c, String prefix, String name, List<KernelParam> params, boolean ir,
                                 Runnable body) {
        c.append(prefix).append("static __attribute__((noinline)) void ").append(name)
                .append("(const int64_t *range, void **args) {\n");
        head(c, params, ir);
        body.run();
        c.append("}\n");
    }

    /**
     * The 1 an IR kernel converts booleans with ({@code arrayd_one}, see {@code CRenderer#cast}), declared before the
     * loops: the empty {@code asm} keeps gcc from knowing its value.
     */
    private static final String OPAQUE_ONE = """
                int32_t arrayd_one = 1;
                __asm__("" : "+r"(arrayd_one));
            """;

    /** The item of work-item {@code x, y, z}, as {@link #loops} builds it. */
    private static final String ITEM = """
                            const arrayd_item_t item = {
                                {x, y, z}, {gs0, gs1, gs2}, {x % ls0, y % ls1, z % ls2},
                                {ls0, ls1, ls2}, {x / ls0, y / ls1, z / ls2}};
            """;

    /**
     * As {@link #loops} for an IR kernel, with whole blocks of x run by the kernel's lane form: each block of x for
     * every y of the range before the next block (the items of a launch run in no specified order), so what a
     * column of blocks reads along its loops (a panel of a matrix) stays in cache from one y to the next; then
     * the rest of each row item by item.
     */
    private static void laneLoops(StringBuilder c, KernelSignature signature, String last) {
        StringBuilder args = new StringBuilder();
        for (int i = 0; i < signature.params().size(); i++) {
            args.append(", p").append(i);
        }
        int w = LaneBlocks.WIDTH;
        c.append("    const int64_t xe = range[0] + (range[3] - range[0]) / ").append(w).append(" * ").append(w).append(";\n");
        c.append("    for (int64_t z = range[2]; z < range[5]; z++) {\n");
        c.append("        for (int64_t x = range[0]; x < xe; x += ").append(w).append(") {\n");
        c.append("            for (int64_t y = range[1]; y < range[4]; y++) {\n");
        c.append(ITEM);
        c.append("                ").append(CRenderer.LANE_PREFIX).append(signature.name()).append("(&item").append(args)
                .append(", ext, guard, arrayd_one);\n");
        c.append("            }\n        }\n");
        c.append("        for (int64_t y = range[1]; y < range[4]; y++) {\n");
        c.append("            for (int64_t x = xe; x < range[3]; x++) {\n");
        c.append(ITEM);
        c.append("                ").append(IR_KERNEL_PREFIX).append(signature.name()).append("(&item").append(args)
                .append(", ext, guard, arrayd_one").append(last).append(");\n");
        c.append("""
                            }
                        }
                    }
                """);
    }

    /** The parameters unpacked from {@code args} ({@code p0}...; with {@code ir} the extents and guard record), the sizes. */
    private static void head(StringBuilder c, List<KernelParam> params, boolean ir) {
        appendParams(c, params);
        if (ir) {
            c.append("    const int64_t *ext = (const int64_t *)args[").append(params.size()).append("];\n");
            c.append("    int64_t *guard = (int64_t *)args[").append(params.size() + 1).append("];\n");
            c.append(OPAQUE_ONE);
        }
        c.append("""
                    const int64_t gs0 = range[6], gs1 = range[7], gs2 = range[8];
                    const int64_t ls0 = range[9], ls1 = range[10], ls2 = range[11];
                """);
    }

    /** The z / y / x loops calling the kernel once per work-item, {@code last} appended to its arguments. */
    private static void loops(StringBuilder c, KernelSignature signature, boolean ir, String last) {
        List<KernelParam> params = signature.params();
        c.append("""
                    for (int64_t z = range[2]; z < range[5]; z++) {
                        for (int64_t y = range[1]; y < range[4]; y++) {
                            for (int64_t x = range[0]; x < range[3]; x++) {
                                const arrayd_item_t item = {
                                    {x, y, z}, {gs0, gs1, gs2}, {x % ls0, y % ls1, z % ls2},
                                    {ls0, ls1, ls2}, {x / ls0, y / ls1, z / ls2}};
                """);
        c.append("                ").append(ir ? IR_KERNEL_PREFIX : "").append(signature.name()).append("(&item");
        for (int i = 0; i < params.size(); i++) {
            c.append(", p").append(i);
        }
        c.append(ir ? ", ext, guard, arrayd_one" + last + ");\n" : ");\n");
        c.append("""
                            }
                        }
                    }
                """);
    }

    /**
     * The trampoline of a phased IR kernel (local arrays or barriers, see
     * {@code dev.arrayd.devices.api.ir.GroupPhases}): {@code range} is aligned to whole work-groups; it
     * calls the kernel once per group with {@code {group id[3], global size[3]}}.
     */
    static String groupTrampoline(KernelSignature signature) {
        return groupTrampoline(signature, false, "");
    }

    /**
     * With {@code hoisted}, as {@link #trampoline(KernelSignature, boolean, boolean, String)} does for a range of
     * work-items: {@code arrayd_ok_<name>} checks the range's groups once, which then run with {@code arrayd_ok = 1},
     * else {@code arrayd_guarded_<name>} (never inlined) runs them with every guard. {@code prefix} goes before each
     * function defined.
     */
    static String groupTrampoline(KernelSignature signature, boolean hoisted, String prefix) {
        checkIdentifier(signature.name(), "entry point");
        List<KernelParam> params = signature.params();
        StringBuilder c = new StringBuilder(1024);
        String guarded = "arrayd_guarded_" + signature.name();
        if (hoisted) {
            c.append(prefix).append("static __attribute__((noinline)) void ").append(guarded)
                    .append("(const int64_t *range, void **args) {\n");
            groupHead(c, params);
            groupLoops(c, signature, ", 0");
            c.append("}\n");
        }
        c.append(prefix).append("void ARRAYD_RUN(").append(signature.name()).append(")(const int64_t *range, void **args) {\n");
        groupHead(c, params);
        if (!hoisted) {
            groupLoops(c, signature, "");
        } else {
            checked(c, signature, "range[6], range[7], range[8]", () -> groupLoops(c, signature, ", 1"));
        }
        c.append("}\n");
        return c.toString();
    }

    /**
     * The range checked once by {@code arrayd_ok_<name>} (global sizes {@code sizes}): {@code fast} (the loops with
     * {@code arrayd_ok = 1}) when it holds, else {@code arrayd_guarded_<name>(range, args)}.
     */
    private static void checked(StringBuilder c, KernelSignature signature, String sizes, Runnable fast) {
        c.append("    const arrayd_item_t box = {{0, 0, 0}, {").append(sizes)
                .append("}, {0, 0, 0}, {ls0, ls1, ls2}, {0, 0, 0}};\n");
        c.append("""
                    const int64_t lo[3] = {range[0], range[1], range[2]};
                    const int64_t hi[3] = {range[3] - 1, range[4] - 1, range[5] - 1};
                """);
        c.append("    if (hi[0] >= lo[0] && hi[1] >= lo[1] && hi[2] >= lo[2] && arrayd_ok_").append(signature.name())
                .append("(&box, lo, hi");
        for (int i = 0; i < signature.params().size(); i++) {
            c.append(", p").append(i);
        }
        c.append(", ext)) {\n");
        fast.run();
        c.append("    } else {\n");
        c.append("        arrayd_guarded_").append(signature.name()).append("(range, args);\n");
        c.append("    }\n");
    }

    private static void groupHead(StringBuilder c, List<KernelParam> params) {
        appendParams(c, params);
        c.append("    const int64_t *ext = (const int64_t *)args[").append(params.size()).append("];\n");
        c.append("    int64_t *guard = (int64_t *)args[").append(params.size() + 1).append("];\n");
        c.append(OPAQUE_ONE);
        c.append("    const int64_t ls0 = range[9], ls1 = range[10], ls2 = range[11];\n");
    }

    /** The z / y / x loops over the range's groups, calling the kernel once per group, {@code last} appended. */
    private static void groupLoops(StringBuilder c, KernelSignature signature, String last) {
        c.append("""
                    for (int64_t z = range[2] / ls2; z < range[5] / ls2; z++) {
                        for (int64_t y = range[1] / ls1; y < range[4] / ls1; y++) {
                            for (int64_t x = range[0] / ls0; x < range[3] / ls0; x++) {
                                const int64_t grp[6] = {x, y, z, range[6], range[7], range[8]};
                """);
        c.append("                ").append(IR_KERNEL_PREFIX).append(signature.name()).append("(grp");
        for (int i = 0; i < signature.params().size(); i++) {
            c.append(", p").append(i);
        }
        c.append(", ext, guard, arrayd_one").append(last).append(");\n");
        c.append("""
                            }
                        }
                    }
                """);
    }

    private static void appendParams(StringBuilder c, List<KernelParam> params) {
        for (int i = 0; i < params.size(); i++) {
            KernelParam p = params.get(i);
            String type = p.dtype().cType();
            if (p.isBuffer()) {
                String pointer = (p.access() == Access.READ ? "const " : "") + type + " *";
                c.append("    ").append(pointer).append("p").append(i)
                        .append(" = (").append(pointer).append(")args[").append(i).append("];\n");
            } else {
                c.append("    const ").append(type).append(" p").append(i)
                        .append(" = *(const ").append(type).append(" *)args[").append(i).append("];\n");
            }
        }
    }
}
