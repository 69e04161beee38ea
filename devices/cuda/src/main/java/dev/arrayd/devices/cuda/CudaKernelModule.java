package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.support.RefCountedModule;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;


/**
 * A module loaded into the context of every device it was compiled for ({@code CUmodule} per device).
 * Closing unloads it once no launch holds it ({@link RefCountedModule}): launches hold it from their
 * enqueue to their completion, so a module closed under a running launch stays loaded until then.
 */
final class CudaKernelModule extends RefCountedModule {

    private final CudaDevice[] devices;
    private final CUmodule[] modules;

    CudaKernelModule(CudaDevice[] devices, CUmodule[] modules, String diagnostics) {
        super(diagnostics);
        this.devices = devices;
        this.modules = modules;
    }

    /** Holds the module for a launch of {@code kernel}; FAILED_PRECONDITION once it is closed. */
    CudaKernelModule acquire(String kernel) {
        if (!acquire()) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, "kernel: " + kernel
                    + " (expected: a kernel of an open module; its module was closed)");
        }
        return this;
    }

    @Override
    protected void unload() {
        for (int i = 0; i < modules.length; i++) {
            if (modules[i] != null && !devices[i].isClosed()) {
                // unloading needs the module's context current; a stream worker restores its own afterwards
                JCudaDriver.cuCtxSetCurrent(devices[i].context());
                JCudaDriver.cuModuleUnload(modules[i]);
            }
        }
    }
}
