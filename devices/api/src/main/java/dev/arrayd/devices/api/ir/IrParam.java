package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;

import java.util.Objects;

/** A parameter of an IR kernel. */
public sealed interface IrParam {

    String name();

    DType dtype();

    /**
     * A buffer. Its extent is the bound buffer's element count at launch; {@code minExtent}, when not
     * null, is a lower bound of it that the launch checks and the range analysis relies on.
     */
    record Buffer(String name, DType dtype, Access access, Expr minExtent) implements IrParam {
        public Buffer {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(dtype, "dtype");
            Objects.requireNonNull(access, "access");
        }
    }

    /** A scalar; {@code min} / {@code max} (null when absent) are inclusive bounds a launch must respect. */
    record Scalar(String name, DType dtype, Long min, Long max) implements IrParam {
        public Scalar {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(dtype, "dtype");
        }
    }
}
