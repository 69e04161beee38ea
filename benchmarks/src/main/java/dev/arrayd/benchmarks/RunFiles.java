package dev.arrayd.benchmarks;

/**
 * The files {@link BenchMain} adds to every results folder, from which {@code bench report} assembles
 * {@code docs/benchmarks.md}.
 */
final class RunFiles {

    /** The {@code RESULT} line, as printed. */
    static final String RESULT = "result.txt";
    /** The command line that produced the folder. */
    static final String COMMAND = "command.txt";
    /** The scenario's Markdown section ({@link Report#section()}). */
    static final String SECTION = "section.md";
    /** Where and when it ran ({@link Machine}). */
    static final String MACHINE = "machine.properties";

    private RunFiles() {}
}
