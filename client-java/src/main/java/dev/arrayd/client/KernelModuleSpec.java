package dev.arrayd.client;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One kernel module to compile: source text in a dialect and its entry points.
 *
 * <pre>{@code
 * KernelModuleSpec m = KernelModuleSpec.of(Dialect.C, source, KernelSpec.entry("vadd")...).backend("cpu");
 * }</pre>
 *
 * @param dialect source language
 * @param source  the source text
 * @param entries the entry points, each with its parameters; at least one
 * @param backend backend to compile for ({@code "cpu"}, {@code "opencl"}, {@code "cuda"}); empty (the
 *                default) = every available backend that accepts the dialect
 * @param ir      the kernels of an IR module (dialect IR, empty source); empty for every other dialect
 */
public record KernelModuleSpec(Dialect dialect, String source, List<KernelSpec> entries, String backend,
                               List<IrKernelSpec> ir) {
    public KernelModuleSpec {
        Objects.requireNonNull(dialect, "dialect");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(backend, "backend");
        entries = List.copyOf(entries);
        ir = List.copyOf(ir);
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("entries: [] (expected: at least one entry point)");
        }
        if ((dialect == Dialect.IR) != !ir.isEmpty()) {
            throw new IllegalArgumentException("ir: " + ir.size() + " kernels (expected: IR kernels exactly for dialect IR)");
        }
    }

    /** Native source. */
    public KernelModuleSpec(Dialect dialect, String source, List<KernelSpec> entries, String backend) {
        this(dialect, source, entries, backend, List.of());
    }

    /**
     * An IR module: the kernels are compiled together and are its entry points. IR is the safe path:
     * the daemon checks every memory access, so it needs no {@code --allow-native-source}.
     */
    public static KernelModuleSpec ir(IrKernelSpec... kernels) {
        return new KernelModuleSpec(Dialect.IR, "", Arrays.stream(kernels).map(IrKernelSpec::signature).toList(), "",
                List.of(kernels));
    }

    /** A module for every backend that accepts the dialect. */
    public static KernelModuleSpec of(Dialect dialect, String source, KernelSpec... entries) {
        return new KernelModuleSpec(dialect, source, List.of(entries), "");
    }

    /** The same module compiled for one backend only. */
    public KernelModuleSpec backend(String backend) {
        return new KernelModuleSpec(dialect, source, entries, backend, ir);
    }
}
