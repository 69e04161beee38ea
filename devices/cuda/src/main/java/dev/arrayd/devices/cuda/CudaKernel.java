package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.ir.CheckedKernel;
import jcuda.driver.CUfunction;

/**
 * An entry point of a {@link CudaKernelModule}: one {@code CUfunction} per device the module was loaded
 * on (a module is per context), indexed by device ordinal. An IR kernel also keeps its checked IR: its
 * entry point is the launch wrapper of {@link CudaIrAssembler}, which takes the extents and guard words
 * after the declared arguments.
 */
final class CudaKernel implements Kernel {

    private final KernelSignature signature;
    private final CudaKernelModule module;
    private final CUfunction[] functions;
    private final CheckedKernel ir; // null for CUDA C and PTX

    CudaKernel(KernelSignature signature, CudaKernelModule module, CUfunction[] functions, CheckedKernel ir) {
        this.signature = signature;
        this.module = module;
        this.functions = functions;
        this.ir = ir;
    }

    @Override
    public CheckedKernel ir() {
        return ir;
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
