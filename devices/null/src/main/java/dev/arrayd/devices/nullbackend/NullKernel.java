package dev.arrayd.devices.nullbackend;

import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelSignature;

/** An entry point of a null module: its declared signature and nothing else to run. */
record NullKernel(KernelSignature signature, NullModule module) implements Kernel {

    @Override
    public String backend() {
        return NullBackend.NAME;
    }
}
