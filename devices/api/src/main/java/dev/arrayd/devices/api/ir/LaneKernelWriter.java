package dev.arrayd.devices.api.ir;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Writes a kernel's lane form ({@link LaneBlocks}) after its own function: {@code <renderer's lane head>(params...)}
 * running {@link LaneBlocks#WIDTH} work-items from its item's {@code global_id(0)} on. Statements the plan runs
 * once per block are written as they are; runs of per-lane statements become loops over the lanes, in which the
 * variables kept per lane are arrays indexed by {@code arrayd_l} (or, lane-major, fields of the lane's struct
 * {@code arrayd_v[arrayd_l]}), and derived variables are written out where they are read.
 */
final class LaneKernelWriter extends KernelWriter {

    private final LaneBlocks.Plan lanes;
    /** Whether the text being written runs per lane (else once per block). */
    private boolean inLane;
    /** Variables kept per lane that only their own lane loop uses: declared in it, one per lane (names are unique). */
    private final Set<String> loopLocal = new HashSet<>();

    LaneKernelWriter(CLikeRenderer r, CheckedKernel k, StringBuilder out, LaneBlocks.Plan lanes) {
        super(r, k, out);
        this.lanes = lanes;
    }

    @Override
    String var(String name) {
        Expr derived = lanes.derived().get(name);
        if (derived != null) {
            if (!inLane) {
                throw new IllegalStateException("derived variable " + name + " read outside a lane loop");
            }
            return "(" + expr(derived) + ")";
        }
        if (!inLane || !lanes.arrays().contains(name) || loopLocal.contains(name)) {
            return "v_" + name;
        }
        return lanes.laneMajor() ? "arrayd_v[arrayd_l].v_" + name : "v_" + name + "[arrayd_l]";
    }

    @Override
    boolean storedElsewhere(String name) {
        return inLane && lanes.arrays().contains(name) && !loopLocal.contains(name);
    }

    /**
     * The lane form ({@link LaneBlocks}): {@link LaneBlocks#WIDTH} work-items from the item's {@code global_id(0)} on,
     * run only where the block check passed (so {@code arrayd_ok} is 1 in it).
     */
    @Override
    void kernel() {
        out.append(r.laneKernelHead(k));
        params(false);
        out.append("    const int arrayd_ok = 1;\n    (void)arrayd_ok;\n");
        int fields = out.length();
        laneBlock(k.kernel().body(), 1);
        if (lanes.laneMajor()) {
            // the lanes' struct, declared before the body that uses it, once the body has told which variables it keeps
            StringBuilder struct = new StringBuilder();
            for (String name : lanes.arrays()) {
                if (!loopLocal.contains(name)) {
                    struct.append("        ").append(CLikeRenderer.valueType(k.varType(name))).append(" v_").append(name)
                            .append(";\n");
                }
            }
            if (!struct.isEmpty()) {
                out.insert(fields, "    struct {\n" + struct + "    } arrayd_v[" + LaneBlocks.WIDTH + "];\n");
            }
        }
        out.append("}\n");
    }

    /** A block run once per block of lanes: runs of per-lane statements become lane loops. */
    private void laneBlock(List<Stmt> body, int depth) {
        List<Stmt> run = new ArrayList<>();
        for (int i = 0; i < body.size(); i++) {
            Stmt s = body.get(i);
            if (lanes.inLane(s)) {
                run.add(s);
                continue;
            }
            if (s instanceof Stmt.Let let && lanes.derived().containsKey(let.name())) {
                continue; // written where it is used
            }
            laneLoop(run, body.subList(i, body.size()), depth);
            run.clear();
            switch (s) {
                // a hoisted condition holds for every item of a block that passed the check
                case Stmt.If branch when hoisted.hoistedCondition(branch) ->
                        compound("{\n", branch.thenBody(), List.of(), depth, this::laneBlock);
                case Stmt.If branch -> compound("if (" + expr(branch.condition()) + ") {\n", branch.thenBody(),
                        branch.elseBody(), depth, this::laneBlock);
                case Stmt.For loop -> compound(forHead(loop), loop.body(), List.of(), depth, this::laneBlock);
                default -> stmt(s, depth);
            }
        }
        laneLoop(run, List.of(), depth);
    }

    /**
     * Runs {@code run} once per lane, in a loop gcc may vectorize (lanes are work-items: no dependence between them).
     * A variable it declares that nothing in {@code rest} (the statements after it in its block) uses is private to
     * the loop, a plain local of each lane.
     */
    private void laneLoop(List<Stmt> run, List<Stmt> rest, int depth) {
        if (run.isEmpty()) {
            return;
        }
        Set<String> later = new HashSet<>();
        rest.forEach(s -> GroupPhases.vars(s, later));
        for (Stmt s : run) {
            if (s instanceof Stmt.Let let && lanes.arrays().contains(let.name()) && !later.contains(let.name())) {
                loopLocal.add(let.name());
            }
        }
        for (Stmt s : run) {
            if (!lanes.laneMajor() && s instanceof Stmt.Let let && lanes.arrays().contains(let.name())
                    && !loopLocal.contains(let.name())) {
                indent(depth);
                out.append(CLikeRenderer.valueType(k.varType(let.name()))).append(" v_").append(let.name()).append('[')
                        .append(LaneBlocks.WIDTH).append("];\n");
            }
        }
        indent(depth);
        out.append("#pragma GCC ivdep\n");
        indent(depth);
        out.append("for (int arrayd_l = 0; arrayd_l < ").append(LaneBlocks.WIDTH).append("; arrayd_l++) {\n");
        inLane = true;
        for (Stmt s : run) {
            stmt(s, depth + 1);
        }
        inLane = false;
        indent(depth);
        out.append("}\n");
    }

    /** In a lane loop, the builtins of dimension 0 are lane {@code arrayd_l}'s of a block starting at the item's. */
    @Override
    String builtin(Expr.Builtin.Kind kind, int dim) {
        if (!inLane || dim != 0) {
            return r.builtin(kind, dim);
        }
        String x = "(" + r.builtin(Expr.Builtin.Kind.GLOBAL_ID, 0) + " + arrayd_l)";
        String l = r.builtin(Expr.Builtin.Kind.LOCAL_SIZE, 0);
        return switch (kind) {
            case GLOBAL_ID -> x;
            case LOCAL_ID -> "(" + x + " % " + l + ")";
            case GROUP_ID -> "(" + x + " / " + l + ")";
            default -> r.builtin(kind, 0);
        };
    }

}
