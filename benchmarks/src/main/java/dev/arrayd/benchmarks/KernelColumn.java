package dev.arrayd.benchmarks;

/**
 * One way of running the kernels of {@code bench kernels}: through arrayd on some device, or directly
 * through JOCL in this process. A column holds the device buffers of one workload at a time.
 */
interface KernelColumn extends AutoCloseable {

    /** The column's key in CSVs and the {@code RESULT} line, e.g. {@code "cpu"}. */
    String key();

    /** A readable name for tables and plots, naming the device. */
    String label();

    /** Creates the workload's buffers (dropping the previous workload's) and prepares its launches. */
    void prepare(KernelWorkload w) throws Exception;

    /** Writes the inputs, runs the workload once and returns its output buffer. */
    float[] runOnceAndRead(KernelWorkload w) throws Exception;

    /** One timed run of the prepared workload. */
    LaunchTime run() throws Exception;

    /** One timed launch of the empty kernel with a grid of one work-item, waited for. */
    long emptyRoundTripNanos() throws Exception;

    @Override
    void close() throws Exception;
}
