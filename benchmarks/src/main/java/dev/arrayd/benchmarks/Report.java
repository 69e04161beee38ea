package dev.arrayd.benchmarks;

import java.util.List;
import java.util.Objects;

/**
 * What a scenario prints when it is done.
 *
 * @param lines  human-readable lines (a small table), printed first
 * @param result the machine-readable figures, {@code key=value} separated by spaces; printed last as
 *               {@code RESULT <scenario> <result>}, so scripts can take the last line of stdout
 */
public record Report(List<String> lines, String result) {
    public Report {
        lines = List.copyOf(lines);
        Objects.requireNonNull(result, "result");
        if (result.contains("\n")) {
            throw new IllegalArgumentException("result: \"" + result + "\" (expected: one line)");
        }
    }
}
