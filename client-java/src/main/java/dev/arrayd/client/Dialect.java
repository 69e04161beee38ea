package dev.arrayd.client;

/** Source language of a kernel module. */
public enum Dialect {
    /** C99 for the CPU backend. */
    C,
    OPENCL_C,
    CUDA_C,
    PTX,
    /** arrayd's portable kernel IR: build modules with {@link Ir} and {@link KernelModuleSpec#ir}. */
    IR
}
