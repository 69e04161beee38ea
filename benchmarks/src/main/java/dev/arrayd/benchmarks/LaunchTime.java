package dev.arrayd.benchmarks;

/**
 * One timed run of a kernel in one column.
 *
 * @param wallNanos   what the caller waited: from submitting the run's launches until the last one
 *                    completed (through arrayd: the gRPC round trip included; direct: enqueue to clFinish)
 * @param deviceNanos what the device reports it spent running them (arrayd's per-command device time;
 *                    direct: the OpenCL profiling interval), summed over the run's launches
 */
record LaunchTime(long wallNanos, long deviceNanos) {}
