package dev.arrayd.devices.api;

import java.util.Objects;

/**
 * One declared parameter of a kernel entry point: a buffer (with element type and access) or a
 * scalar. Launches are checked against these before anything runs.
 */
public record KernelParam(String name, Kind kind, DType dtype, Access access) {

    public enum Kind { BUFFER, SCALAR }

    public KernelParam {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(dtype, "dtype");
        if (kind == Kind.BUFFER) {
            Objects.requireNonNull(access, "access of buffer parameter " + name);
        } else {
            access = null;
        }
    }

    public static KernelParam buffer(String name, DType dtype, Access access) {
        return new KernelParam(name, Kind.BUFFER, dtype, access);
    }

    public static KernelParam scalar(String name, DType dtype) {
        return new KernelParam(name, Kind.SCALAR, dtype, null);
    }

    public boolean isBuffer() {
        return kind == Kind.BUFFER;
    }
}
