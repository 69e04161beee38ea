package dev.arrayd.devices.api.ir;

import java.util.List;

/** A module of IR kernels, compiled together; the kernels' names are its entry points. */
public record IrModule(List<IrKernel> kernels) {

    public IrModule {
        kernels = List.copyOf(kernels);
    }
}
