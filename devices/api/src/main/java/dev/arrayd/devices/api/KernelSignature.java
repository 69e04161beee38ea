package dev.arrayd.devices.api;

import java.util.List;
import java.util.Objects;

/** Name and parameters of one kernel entry point. */
public record KernelSignature(String name, List<KernelParam> params) {

    public KernelSignature {
        Objects.requireNonNull(name, "name");
        params = List.copyOf(params);
    }
}
