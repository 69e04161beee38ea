package dev.arrayd.client;

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
 */
public record KernelModuleSpec(Dialect dialect, String source, List<KernelSpec> entries, String backend) {
    public KernelModuleSpec {
        Objects.requireNonNull(dialect, "dialect");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(backend, "backend");
        entries = List.copyOf(entries);
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("entries: [] (expected: at least one entry point)");
        }
    }

    /** A module for every backend that accepts the dialect. */
    public static KernelModuleSpec of(Dialect dialect, String source, KernelSpec... entries) {
        return new KernelModuleSpec(dialect, source, List.of(entries), "");
    }

    /** The same module compiled for one backend only. */
    public KernelModuleSpec backend(String backend) {
        return new KernelModuleSpec(dialect, source, entries, backend);
    }
}
