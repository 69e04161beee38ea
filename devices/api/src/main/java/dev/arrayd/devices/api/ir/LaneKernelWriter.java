package dev.arrayd.devices.api.ir;

import java.util.ArrayList;
import java.util.List;

/**
 * Writes a kernel's lane form ({@link LaneBlocks}) after its own function: {@code <renderer's lane head>(params...)}
 * running {@link LaneBlocks#WIDTH} work-items from its item's {@code global_id(0)} on. Statements the plan runs
 * once per block are written as they are; runs of per-lane statements become loops over the lanes, in which the
 * variables kept per lane are arrays indexed by {@code arrayd_l}.
 */
final class LaneKernelWriter extends KernelWriter {

    private final LaneBlocks.Plan lanes;
    /** Whether the text being written runs per lane (else once per block). */
    private boolean inLane;

    LaneKernelWriter(CLikeRenderer r, CheckedKernel k, StringBuilder out, LaneBlocks.Plan lanes) {
        super(r, k, out);
        this.lanes = lanes;
    }

    @Override
    String var(String name) {
        return inLane && lanes.arrays().contains(name) ? "v_" + name + "[arrayd_l]" : "v_" + name;
    }

    @Override
    boolean storedElsewhere(String name) {
        return inLane && lanes.arrays().contains(name);
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
        laneBlock(k.kernel().body(), 1);
        out.append("}\n");
    }

    /** A block run once per block of lanes: runs of per-lane statements become lane loops. */
    private void laneBlock(List<Stmt> body, int depth) {
        List<Stmt> run = new ArrayList<>();
        for (Stmt s : body) {
            if (lanes.inLane(s)) {
                run.add(s);
                continue;
            }
            laneLoop(run, depth);
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
        laneLoop(run, depth);
    }

    /** Runs {@code run} once per lane, in a loop gcc may vectorize (lanes are work-items: no dependence between them). */
    private void laneLoop(List<Stmt> run, int depth) {
        if (run.isEmpty()) {
            return;
        }
        for (Stmt s : run) {
            if (s instanceof Stmt.Let let && lanes.arrays().contains(let.name())) {
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
