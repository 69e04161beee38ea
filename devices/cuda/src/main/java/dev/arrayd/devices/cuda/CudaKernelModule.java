package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelModule;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A module loaded into the context of every device it was compiled for ({@code CUmodule} per device).
 * Closing unloads it once no launch holds it: launches {@link #acquire} it when they are enqueued and
 * {@link #release} it when they complete, so a module closed under a running launch stays loaded until then.
 */
final class CudaKernelModule implements KernelModule {

    private final CudaDevice[] devices;
    private final CUmodule[] modules;
    private final String diagnostics;
    private volatile List<Kernel> kernels = List.of();
    // launches in flight, plus one for "open": unloaded when it reaches zero
    private final AtomicInteger holds = new AtomicInteger(1);
    private volatile boolean closed;

    CudaKernelModule(CudaDevice[] devices, CUmodule[] modules, String diagnostics) {
        this.devices = devices;
        this.modules = modules;
        this.diagnostics = diagnostics;
    }

    void setKernels(List<Kernel> kernels) {
        this.kernels = List.copyOf(kernels);
    }

    @Override
    public List<Kernel> kernels() {
        return kernels;
    }

    @Override
    public String diagnostics() {
        return diagnostics;
    }

    CudaKernelModule acquire(String kernel) {
        for (;;) {
            int h = holds.get();
            if (h == 0) {
                throw new ArraydException(ErrorCode.FAILED_PRECONDITION, "kernel: " + kernel
                        + " (expected: a kernel of an open module; its module was closed)");
            }
            if (holds.compareAndSet(h, h + 1)) {
                return this;
            }
        }
    }

    /** @return true when this was the last hold and the module was unloaded (the current context may have changed) */
    boolean release() {
        if (holds.decrementAndGet() == 0) {
            unload();
            return true;
        }
        return false;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        release();
    }

    private void unload() {
        for (int i = 0; i < modules.length; i++) {
            if (modules[i] != null && !devices[i].isClosed()) {
                // unloading needs the module's context current; a stream worker restores its own afterwards
                JCudaDriver.cuCtxSetCurrent(devices[i].context());
                JCudaDriver.cuModuleUnload(modules[i]);
            }
        }
    }
}
