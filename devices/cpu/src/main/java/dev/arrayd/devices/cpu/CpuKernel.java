package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.ir.CheckedKernel;

import java.lang.invoke.MethodHandle;

/**
 * An entry point of a loaded module: its trampoline as a downcall {@code (range, args) -> void}.
 * {@code ir} is the checked IR kernel it was rendered from (its launches pass extents and a guard
 * record, see {@link ArgBlock}), or null for C source.
 */
record CpuKernel(KernelSignature signature, MethodHandle trampoline, CpuKernelModule module, CheckedKernel ir)
        implements Kernel {

    /** Whether the trampoline runs whole work-groups (local arrays or barriers): launch chunks must be group-aligned. */
    boolean phased() {
        return ir != null && dev.arrayd.devices.api.ir.GroupPhases.needed(ir);
    }

    @Override
    public String backend() {
        return CpuBackend.NAME;
    }

    @Override
    public String toString() {
        return "cpu kernel " + signature.name();
    }
}
