package dev.arrayd.scheduler;

import java.util.Locale;

/** How a command ended, as observers and metrics name it. */
public enum CommandOutcome {
    /** It ran and succeeded. */
    SUCCEEDED,
    /** It ran (or was refused by its device) and failed. */
    FAILED,
    /** It did not run: an event it waited on failed (sticky failure). */
    DEPENDENCY_FAILED,
    /** It was cancelled (by its client, or because its session's call ended); a running one's result was dropped. */
    CANCELLED,
    /** Its deadline passed before it was handed to its device: it never ran. */
    DEADLINE_EXCEEDED,
    /** The daemon shut down before it finished: its event was failed with UNAVAILABLE. */
    ABORTED;

    private final String label = name().toLowerCase(Locale.ROOT);

    /** Lower-case name, e.g. {@code "succeeded"} (a metric label value). */
    public String label() {
        return label;
    }
}
