package dev.arrayd.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The signature of one kernel entry point: its name and parameters in order. Immutable; each builder
 * method returns a new spec:
 *
 * <pre>{@code
 * KernelSpec vadd = KernelSpec.entry("vadd")
 *         .buffer("a", DType.F32, Access.READ)
 *         .buffer("b", DType.F32, Access.READ)
 *         .buffer("c", DType.F32, Access.WRITE)
 *         .scalar("n", DType.I32);
 * }</pre>
 *
 * @param name   the entry point's name in the source (a C identifier)
 * @param params the parameters, in order
 */
public record KernelSpec(String name, List<Param> params) {
    public KernelSpec {
        Objects.requireNonNull(name, "name");
        params = List.copyOf(params);
        if (!isIdentifier(name)) {
            throw new IllegalArgumentException("name: \"" + name + "\" (expected: a C identifier)");
        }
    }

    /** A spec with no parameters yet. */
    public static KernelSpec entry(String name) {
        return new KernelSpec(name, List.of());
    }

    /** Appends a buffer parameter. */
    public KernelSpec buffer(String name, DType dtype, Access access) {
        return with(new BufferParam(name, dtype, access));
    }

    /** Appends a scalar parameter. */
    public KernelSpec scalar(String name, DType dtype) {
        return with(new ScalarParam(name, dtype));
    }

    private KernelSpec with(Param p) {
        for (Param q : params) {
            if (q.name().equals(p.name())) {
                throw new IllegalArgumentException(
                        "params[" + params.size() + "]: \"" + p.name() + "\" (expected: a name not already used in "
                                + name + ")");
            }
        }
        List<Param> next = new ArrayList<>(params.size() + 1);
        next.addAll(params);
        next.add(p);
        return new KernelSpec(name, next);
    }

    static boolean isIdentifier(String s) {
        if (s.isEmpty() || !(Character.isLetter(s.charAt(0)) || s.charAt(0) == '_')) {
            return false;
        }
        for (int i = 1; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!(c < 128 && (Character.isLetterOrDigit(c) || c == '_'))) {
                return false;
            }
        }
        return s.charAt(0) < 128;
    }

    /** A kernel parameter. */
    public sealed interface Param permits BufferParam, ScalarParam {
        String name();

        DType dtype();
    }

    /**
     * A buffer parameter.
     *
     * @param name   parameter name
     * @param dtype  element type the kernel expects
     * @param access how the kernel accesses it
     */
    public record BufferParam(String name, DType dtype, Access access) implements Param {
        public BufferParam {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(dtype, "dtype");
            Objects.requireNonNull(access, "access");
        }
    }

    /**
     * A scalar parameter, passed by value.
     *
     * @param name  parameter name
     * @param dtype its type; launch arguments are converted to it
     */
    public record ScalarParam(String name, DType dtype) implements Param {
        public ScalarParam {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(dtype, "dtype");
        }
    }
}
