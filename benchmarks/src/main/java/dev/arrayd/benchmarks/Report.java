package dev.arrayd.benchmarks;

import java.util.List;
import java.util.Objects;

/**
 * What a scenario prints when it is done.
 *
 * @param lines   human-readable lines (a small table), printed first
 * @param result  the machine-readable figures, {@code key=value} separated by spaces; printed last as
 *                {@code RESULT <scenario> <result>}, so scripts can take the last line of stdout
 * @param section the scenario's part of {@code docs/benchmarks.md} as Markdown (every figure beside its
 *                anchor; plots referenced by their file name in the results folder), written to
 *                {@code section.md} for {@code bench report}; empty for none
 */
public record Report(List<String> lines, String result, String section) {
    public Report {
        lines = List.copyOf(lines);
        Objects.requireNonNull(result, "result");
        Objects.requireNonNull(section, "section");
        if (result.contains("\n")) {
            throw new IllegalArgumentException("result: \"" + result + "\" (expected: one line)");
        }
    }

    public Report(List<String> lines, String result) {
        this(lines, result, "");
    }
}
