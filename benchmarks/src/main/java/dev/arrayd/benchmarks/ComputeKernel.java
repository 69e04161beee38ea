package dev.arrayd.benchmarks;

import dev.arrayd.client.Access;
import dev.arrayd.client.DType;
import dev.arrayd.client.Ir;
import dev.arrayd.client.IrExpr;
import dev.arrayd.client.IrKernelSpec;

/**
 * Task Bench's compute-bound kernel, as portable IR (what a default daemon runs) and in arrayd's C kernel
 * convention (a daemon with {@code --allow-native-source}): 64 doubles, each updated {@code a = a * a + a}
 * per iteration, so a task's work is set by one number and no memory traffic competes with it. Run with
 * {@code global = [1]}: one task is one work-item on one core.
 */
final class ComputeKernel {

    static final String NAME = "compute_bound";

    /**
     * The state lives in the task's own buffer of 64 doubles (zeroed: the values stay 0, so no
     * denormal or overflow slows a run down), loaded and stored once per task.
     */
    static final String SOURCE = """
            ARRAYD_KERNEL void compute_bound(ARRAYD_ITEM, double *state, int64_t iterations) {
                double v[64];
                for (int i = 0; i < 64; i++) v[i] = state[i];
                for (int64_t it = 0; it < iterations; it++) {
                    for (int i = 0; i < 64; i++) v[i] = v[i] * v[i] + v[i];
                }
                for (int i = 0; i < 64; i++) state[i] = v[i];
            }
            """;

    static final int STATE_DOUBLES = 64;

    /** Most iterations of one task the IR kernel declares (its loop's bound, checked at launch). */
    static final long MAX_ITERATIONS = 1L << 24;

    /**
     * The same kernel in IR: the 64 values in variables (registers, like the C kernel's array), loaded once,
     * updated {@code iterations} times, stored once; every access proven in bounds against the declared 64.
     */
    static IrKernelSpec ir() {
        return Ir.kernel(NAME).buffer("state", DType.F64, Access.READ_WRITE, Ir.i64(STATE_DOUBLES))
                .scalar("iterations", DType.I64, 0, MAX_ITERATIONS).body(b -> {
                    for (int i = 0; i < STATE_DOUBLES; i++) {
                        b.var("v" + i, Ir.load("state", Ir.i64(i)));
                    }
                    b.loop("it", Ir.i64(0), Ir.param("iterations"), (loop, it) -> {
                        for (int i = 0; i < STATE_DOUBLES; i++) {
                            IrExpr v = Ir.var("v" + i);
                            loop.assign("v" + i, v.mul(v).add(v));
                        }
                    });
                    for (int i = 0; i < STATE_DOUBLES; i++) {
                        b.store("state", Ir.i64(i), Ir.var("v" + i));
                    }
                });
    }

    private ComputeKernel() {}

    /** FLOPs of one task, counted as Task Bench does: two per element per iteration, plus 64. */
    static long flopsPerTask(long iterations) {
        return 2L * 64 * iterations + 64;
    }
}
