package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelSignature;

/**
 * An entry point of a built module.
 *
 * @param index       its position in the module (its kernel pools are found by it)
 * @param argIndexes  for each declared parameter, the index of its first wrapper argument
 */
record OpenClKernel(KernelSignature signature, OpenClKernelModule module, int index, int[] argIndexes) implements Kernel {

    @Override
    public String backend() {
        return OpenClBackend.NAME;
    }

    @Override
    public String toString() {
        return "opencl kernel " + signature.name();
    }
}
