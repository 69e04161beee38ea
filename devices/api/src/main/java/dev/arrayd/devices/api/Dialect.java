package dev.arrayd.devices.api;

/** Source languages a backend's compiler may accept. All but {@link #IR} are native source. */
public enum Dialect {
    C,
    OPENCL_C,
    CUDA_C,
    PTX,
    IR;

    /** Native source can do anything the daemon process can; it is off unless the operator allows it. */
    public boolean isNative() {
        return this != IR;
    }
}
