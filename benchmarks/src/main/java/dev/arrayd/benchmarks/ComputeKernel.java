package dev.arrayd.benchmarks;

/**
 * Task Bench's compute-bound kernel in arrayd's C kernel convention: 64 doubles, each updated
 * {@code a = a * a + a} per iteration, so a task's work is set by one number and no memory traffic
 * competes with it. Run with {@code global = [1]}: one task is one work-item on one core.
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

    private ComputeKernel() {}

    /** FLOPs of one task, counted as Task Bench does: two per element per iteration, plus 64. */
    static long flopsPerTask(long iterations) {
        return 2L * 64 * iterations + 64;
    }
}
