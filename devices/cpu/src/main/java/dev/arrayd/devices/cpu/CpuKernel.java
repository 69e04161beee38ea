package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelSignature;

import java.lang.invoke.MethodHandle;

/** An entry point of a loaded module: its trampoline as a downcall {@code (range, args) -> void}. */
record CpuKernel(KernelSignature signature, MethodHandle trampoline, CpuKernelModule module) implements Kernel {

    @Override
    public String backend() {
        return CpuBackend.NAME;
    }

    @Override
    public String toString() {
        return "cpu kernel " + signature.name();
    }
}
