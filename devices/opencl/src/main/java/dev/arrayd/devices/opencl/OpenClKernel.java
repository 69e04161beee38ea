package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.ir.CheckedKernel;

/**
 * An entry point of a built module.
 *
 * @param index       its position in the module (its kernel pools are found by it)
 * @param argIndexes  for each declared parameter, the index of its first entry argument (see
 *                    {@link OpenClSourceAssembler} and {@link IrProgramAssembler})
 * @param ir          the checked IR kernel it was rendered from, or null for OpenCL C source
 * @param guardArg    the index of the guard record's argument, or -1 when there is none (OpenCL C, or
 *                    an IR kernel whose every access was proven in bounds)
 */
record OpenClKernel(KernelSignature signature, OpenClKernelModule module, int index, int[] argIndexes, CheckedKernel ir,
                    int guardArg) implements Kernel {

    /** An entry point of OpenCL C source. */
    OpenClKernel(KernelSignature signature, OpenClKernelModule module, int index, int[] argIndexes) {
        this(signature, module, index, argIndexes, null, -1);
    }

    @Override
    public String backend() {
        return OpenClBackend.NAME;
    }

    @Override
    public String toString() {
        return "opencl " + (ir == null ? "" : "IR ") + "kernel " + signature.name();
    }
}
