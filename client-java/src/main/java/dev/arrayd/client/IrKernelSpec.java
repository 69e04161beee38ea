package dev.arrayd.client;

import java.util.Objects;

/**
 * A finished IR kernel (see {@link Ir#kernel}): its wire form and the entry-point signature the
 * client checks launches against. Compile it with {@link KernelModuleSpec#ir(IrKernelSpec...)}.
 */
public record IrKernelSpec(dev.arrayd.proto.v1.IrKernel proto, KernelSpec signature) {
    public IrKernelSpec {
        Objects.requireNonNull(proto, "proto");
        Objects.requireNonNull(signature, "signature");
    }

    public String name() {
        return signature.name();
    }
}
