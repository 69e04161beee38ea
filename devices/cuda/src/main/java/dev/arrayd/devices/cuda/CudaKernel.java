package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelSignature;
import jcuda.driver.CUfunction;

/**
 * An entry point of a {@link CudaKernelModule}: one {@code CUfunction} per device the module was loaded
 * on (a module is per context), indexed by device ordinal.
 */
final class CudaKernel implements Kernel {

    private final KernelSignature signature;
    private final CudaKernelModule module;
    private final CUfunction[] functions;

    CudaKernel(KernelSignature signature, CudaKernelModule module, CUfunction[] functions) {
        this.signature = signature;
        this.module = module;
        this.functions = functions;
    }

    @Override
    public KernelSignature signature() {
        return signature;
    }

    @Override
    public String backend() {
        return CudaBackend.NAME;
    }

    CudaKernelModule module() {
        return module;
    }

    CUfunction function(CudaDevice device) {
        int ordinal = device.id().ordinal();
        CUfunction f = ordinal < functions.length ? functions[ordinal] : null;
        if (f == null) {
            throw ArraydException.invalid("kernel: " + signature.name() + " (expected: a kernel loaded on " + device.id()
                    + "; it was compiled for the devices open at the time)");
        }
        return f;
    }

    @Override
    public String toString() {
        return "cuda kernel " + signature.name();
    }
}
