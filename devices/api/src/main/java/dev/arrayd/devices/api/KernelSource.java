package dev.arrayd.devices.api;

import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrModule;

import java.util.List;
import java.util.Objects;

/**
 * A module to compile: source in one dialect and the entry points it defines. For {@link Dialect#IR}
 * the kernels are in {@code ir} (and {@code source} is empty); for every other dialect {@code ir} is null.
 */
public record KernelSource(Dialect dialect, String source, List<KernelSignature> entryPoints, IrModule ir) {

    public KernelSource {
        Objects.requireNonNull(dialect, "dialect");
        Objects.requireNonNull(source, "source");
        entryPoints = List.copyOf(entryPoints);
        if ((dialect == Dialect.IR) != (ir != null)) {
            throw new IllegalArgumentException("ir: " + (ir == null ? "null" : "set") + " (expected: set exactly for dialect IR)");
        }
    }

    /** Native source. */
    public KernelSource(Dialect dialect, String source, List<KernelSignature> entryPoints) {
        this(dialect, source, entryPoints, null);
    }

    /** An IR module; its kernels' signatures are the entry points. */
    public static KernelSource ir(IrModule module) {
        return new KernelSource(Dialect.IR, "", module.kernels().stream().map(IrKernel::signature).toList(), module);
    }
}
