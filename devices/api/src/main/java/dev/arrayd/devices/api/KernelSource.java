package dev.arrayd.devices.api;

import java.util.List;
import java.util.Objects;

/** A module to compile: source in one dialect and the entry points it defines. */
public record KernelSource(Dialect dialect, String source, List<KernelSignature> entryPoints) {

    public KernelSource {
        Objects.requireNonNull(dialect, "dialect");
        Objects.requireNonNull(source, "source");
        entryPoints = List.copyOf(entryPoints);
    }
}
