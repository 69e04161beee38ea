package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.Access;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Writes a kernel that runs group by group in phases ({@link GroupPhases}): one function per work-group taking
 * {@code arrayd_grp} (group id[3], global size[3]); statements containing a barrier run once per group, runs of
 * the others become loops over the group's items, and variables live across a barrier are arrays indexed by the
 * item's position in the group ({@code arrayd_li}).
 */
final class PhasedKernelWriter extends KernelWriter {

    /** Per-item variables (see {@link GroupPhases#spilled}). */
    private final Set<String> spilled;
    /** Whether the text being written runs per item (else once per group). */
    private boolean inItem;

    PhasedKernelWriter(CLikeRenderer r, CheckedKernel k, StringBuilder out) {
        super(r, k, out);
        this.spilled = GroupPhases.spilled(k);
    }

    @Override
    String var(String name) {
        return spilled.contains(name) ? "v_" + name + "[" + (inItem ? "arrayd_li" : "0") + "]" : "v_" + name;
    }

    @Override
    boolean storedElsewhere(String name) {
        return spilled.contains(name);
    }

    private long[] localSize() {
        long[] l = {1, 1, 1};
        for (int d = 0; d < k.kernel().localSize().size(); d++) {
            l[d] = k.kernel().localSize().get(d);
        }
        return l;
    }

    @Override
    void kernel() {
        out.append(r.kernelHead(k)).append("(const arrayd_i64 *arrayd_grp");
        for (IrParam p : k.kernel().params()) {
            out.append(", ");
            switch (p) {
                case IrParam.Buffer b -> out.append(b.access() == Access.READ ? "const " : "").append(r.globalSpace())
                        .append(CLikeRenderer.storageType(b.dtype())).append(" *p_").append(b.name());
                case IrParam.Scalar s -> out.append("const ").append(CLikeRenderer.valueType(IrType.ofScalar(s.dtype())))
                        .append(" p_").append(s.name());
            }
        }
        out.append(", const ").append(r.globalSpace()).append("arrayd_i64 *arrayd_ext, ")
                .append(r.globalSpace()).append("arrayd_i64 *arrayd_guard").append(r.trailingParams())
                .append(hoisted.isEmpty() ? "" : ", const int arrayd_ok")
                .append(") {\n");
        out.append("    const arrayd_i64 arrayd_g0 = arrayd_grp[0], arrayd_g1 = arrayd_grp[1], arrayd_g2 = arrayd_grp[2];\n");
        out.append("    const arrayd_i64 arrayd_gs0 = arrayd_grp[3], arrayd_gs1 = arrayd_grp[4], arrayd_gs2 = arrayd_grp[5];\n");
        for (Stmt s : k.kernel().body()) {
            if (s instanceof Stmt.LocalArray la) {
                // the IR leaves local arrays undefined; zeros make runs reproducible and match the interpreter
                out.append("    ").append(CLikeRenderer.storageType(la.dtype())).append(" l_").append(la.name()).append('[')
                        .append(la.size()).append("];\n    memset(l_").append(la.name()).append(", 0, sizeof l_")
                        .append(la.name()).append(");\n");
            }
        }
        long items = Math.max(1, k.kernel().groupSize());
        for (String v : spilled) {
            out.append("    ").append(CLikeRenderer.valueType(k.varType(v))).append(" v_").append(v).append('[').append(items)
                    .append("];\n");
        }
        long[] l = localSize();
        out.append(r.phasedItem(l, false));
        inItem = false;
        groupBlock(k.kernel().body(), 1);
        out.append("}\n");
        if (!hoisted.isEmpty()) {
            predicate();
        }
    }

    /** A block at group level: runs of barrier-free statements become item loops. */
    private void groupBlock(List<Stmt> body, int depth) {
        List<Stmt> run = new ArrayList<>();
        for (Stmt s : body) {
            if (!GroupPhases.containsBarrier(s)) {
                if (!(s instanceof Stmt.LocalArray)) {
                    run.add(s);
                }
                continue;
            }
            itemLoop(run, depth);
            run.clear();
            switch (s) {
                case Stmt.Barrier b -> {
                    indent(depth);
                    out.append("/* barrier */\n");
                }
                case Stmt.If branch -> compound("if (" + expr(branch.condition()) + ") {\n", branch.thenBody(),
                        branch.elseBody(), depth, this::groupBlock);
                case Stmt.For loop -> compound(forHead(loop), loop.body(), List.of(), depth, this::groupBlock);
                default -> throw new IllegalStateException("only ifs and loops contain barriers: " + s);
            }
        }
        itemLoop(run, depth);
    }

    /**
     * Runs {@code run} for every item of the group, x innermost; where the run is an {@code if (local_id(0) < bound)}
     * ({@link GroupPhases#itemBound}), x only up to the bound.
     */
    private void itemLoop(List<Stmt> run, int depth) {
        if (run.isEmpty()) {
            return;
        }
        long[] l = localSize();
        GroupPhases.ItemBound bound = GroupPhases.itemBound(k, run);
        String xEnd = Long.toString(l[0]);
        if (bound != null) {
            indent(depth);
            out.append("{\n");
            depth++;
            for (Stmt.Let let : bound.lets()) {
                stmt(let, depth);
            }
            indent(depth);
            out.append("arrayd_i64 arrayd_lx_end = (arrayd_i64)(").append(expr(bound.bound())).append(");\n");
            indent(depth);
            out.append("if (arrayd_lx_end > ").append(l[0]).append(") arrayd_lx_end = ").append(l[0]).append(";\n");
            xEnd = "arrayd_lx_end";
        }
        indent(depth);
        out.append("for (arrayd_i64 arrayd_lz = 0; arrayd_lz < ").append(l[2]).append("; arrayd_lz++)\n");
        indent(depth);
        out.append("for (arrayd_i64 arrayd_ly = 0; arrayd_ly < ").append(l[1]).append("; arrayd_ly++)\n");
        indent(depth);
        out.append("for (arrayd_i64 arrayd_lx = 0; arrayd_lx < ").append(xEnd).append("; arrayd_lx++) {\n");
        indent(depth + 1);
        out.append("const arrayd_i64 arrayd_li = (arrayd_lz * ").append(l[1]).append(" + arrayd_ly) * ").append(l[0])
                .append(" + arrayd_lx;\n");
        indent(depth + 1);
        out.append("(void)arrayd_li;\n");
        for (String line : r.phasedItem(l, true).split("\n")) {
            indent(depth);
            out.append(line).append('\n');
        }
        inItem = true;
        for (Stmt s : run) {
            stmt(s, depth + 1);
        }
        inItem = false;
        indent(depth);
        out.append("}\n");
        if (bound != null) {
            indent(depth - 1);
            out.append("}\n");
        }
    }

}
