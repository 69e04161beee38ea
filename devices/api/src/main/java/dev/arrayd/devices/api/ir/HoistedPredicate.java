package dev.arrayd.devices.api.ir;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Writes a kernel's {@code arrayd_ok_<name>(item, lo, hi, params..., arrayd_ext)}: 1 when, over the box of global ids
 * {@code [lo, hi]}, every local id over {@code [0, local size - 1]} and every hoisted loop variable over its loop's
 * bounds, each hoisted access of the
 * {@link GuardHoisting.Plan} is in bounds and each hoisted condition holds; 0 otherwise, also on any overflow. Each
 * affine expression is bounded at the box's corners in overflow-checked 64-bit arithmetic ({@code arrayd_cadd},
 * {@code arrayd_csub}, {@code arrayd_cmul} of the C prelude), its coefficients evaluated as the kernel evaluates
 * them.
 */
final class HoistedPredicate {

    private final CheckedKernel k;
    private final GuardHoisting.Plan plan;
    private final StringBuilder out;
    private final Function<Expr, String> expr;
    private final Function<String, String> extent;

    /**
     * @param expr   renders an expression of the kernel as its body does
     * @param extent the element count of a buffer parameter or local array, as an expression of the rendered kernel
     */
    HoistedPredicate(CheckedKernel k, GuardHoisting.Plan plan, StringBuilder out, Function<Expr, String> expr,
            Function<String, String> extent) {
        this.k = k;
        this.plan = plan;
        this.out = out;
        this.expr = expr;
        this.extent = extent;
    }

    /**
     * Appends the function; {@code leadingParams} are the target's work-item parameters (C: the item; may be
     * empty), {@code globalSpace} the address space of buffers (OpenCL: {@code __global }), {@code locals} what the
     * function declares first (see {@link CLikeRenderer#predicateLocals()}).
     */
    void write(String leadingParams, String globalSpace, String locals) {
        out.append("ARRAYD_FN int arrayd_ok_").append(k.name()).append("(")
                .append(leadingParams.isEmpty() ? "" : leadingParams + ", ")
                .append("const arrayd_i64 *arrayd_lo, const arrayd_i64 *arrayd_hi");
        for (IrParam p : k.kernel().params()) {
            out.append(", ");
            switch (p) {
                case IrParam.Buffer b -> out.append("const ").append(globalSpace).append(CLikeRenderer.storageType(b.dtype()))
                        .append(" *p_").append(b.name());
                case IrParam.Scalar sc -> out.append("const ").append(CLikeRenderer.valueType(IrType.ofScalar(sc.dtype())))
                        .append(" p_").append(sc.name());
            }
        }
        out.append(", const arrayd_i64 *arrayd_ext) {\n").append(locals);
        out.append("    int arrayd_ov = 0;\n    arrayd_i64 arrayd_mn, arrayd_mx, arrayd_rmn, arrayd_rmx, arrayd_a, arrayd_b, arrayd_c;\n");
        Map<String, String[]> range = new HashMap<>();
        for (int d = 0; d < 3; d++) {
            range.put("#g" + d, new String[] {"arrayd_lo[" + d + "]", "arrayd_hi[" + d + "]"});
        }
        List<Long> local = k.kernel().localSize();
        for (int d = 0; d < local.size(); d++) {
            range.put("#l" + d, new String[] {"0", Long.toString(local.get(d) - 1)});
        }
        int n = 0;
        for (GuardHoisting.LoopRange loop : plan.loops()) {
            String lo = "arrayd_r" + n + "_lo";
            String hi = "arrayd_r" + n++ + "_hi";
            out.append("    const arrayd_i64 ").append(lo).append(" = (arrayd_i64)(").append(expr.apply(loop.start())).append(");\n");
            out.append("    const arrayd_i64 ").append(hi).append(" = arrayd_csub((arrayd_i64)(").append(expr.apply(loop.end()))
                    .append("), 1, &arrayd_ov);\n");
            range.put(loop.var(), new String[] {lo, hi});
        }
        for (GuardHoisting.Access a : plan.accesses()) {
            bounds(a.index(), "arrayd_mn", "arrayd_mx", range);
            out.append("    if (arrayd_ov || arrayd_mn < 0 || arrayd_mx >= ").append(extent.apply(a.array())).append(") return 0;\n");
        }
        for (GuardHoisting.Condition c : plan.conditions()) {
            for (GuardHoisting.Comparison part : c.parts()) {
                // each side bounded on its own: no overflow means the kernel computes each side's true value
                bounds(part.left(), "arrayd_mn", "arrayd_mx", range);
                bounds(part.right(), "arrayd_rmn", "arrayd_rmx", range);
                out.append("    if (arrayd_ov || !(arrayd_mx ").append(part.strict() ? "<" : "<=").append(" arrayd_rmn)) return 0;\n");
            }
        }
        out.append("    return 1;\n}\n");
    }

    /** Sets {@code mn} and {@code mx} to the least and greatest value of {@code a} over the box, overflow-checked. */
    private void bounds(GuardHoisting.Affine a, String mn, String mx, Map<String, String[]> range) {
        out.append("    ").append(mn).append(" = 0;\n");
        for (GuardHoisting.Term t : a.constant()) {
            out.append("    arrayd_c = ").append(term(t)).append(";\n");
            out.append("    ").append(mn).append(" = arrayd_cadd(").append(mn).append(", arrayd_c, &arrayd_ov);\n");
        }
        out.append("    ").append(mx).append(" = ").append(mn).append(";\n");
        for (var dim : a.coefficients().entrySet()) {
            out.append("    arrayd_a = 0;\n");
            for (GuardHoisting.Term t : dim.getValue()) {
                out.append("    arrayd_a = arrayd_cadd(arrayd_a, ").append(term(t)).append(", &arrayd_ov);\n");
            }
            String[] r = range.get(dim.getKey());
            out.append("    arrayd_b = arrayd_cmul(arrayd_a, ").append(r[0]).append(", &arrayd_ov);\n");
            out.append("    arrayd_c = arrayd_cmul(arrayd_a, ").append(r[1]).append(", &arrayd_ov);\n");
            out.append("    ").append(mn).append(" = arrayd_cadd(").append(mn)
                    .append(", arrayd_b < arrayd_c ? arrayd_b : arrayd_c, &arrayd_ov);\n");
            out.append("    ").append(mx).append(" = arrayd_cadd(").append(mx)
                    .append(", arrayd_b < arrayd_c ? arrayd_c : arrayd_b, &arrayd_ov);\n");
        }
    }

    /** A term's value, overflow-checked: its scale times its factors, each evaluated as the kernel does. */
    private String term(GuardHoisting.Term t) {
        String v = Long.toString(t.scale());
        for (Expr f : t.factors()) {
            v = "arrayd_cmul(" + v + ", (arrayd_i64)(" + expr.apply(f) + "), &arrayd_ov)";
        }
        return v;
    }
}
