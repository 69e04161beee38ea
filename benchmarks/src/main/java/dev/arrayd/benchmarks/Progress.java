package dev.arrayd.benchmarks;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * The progress line on stderr.
 *
 * <p>On a terminal, {@link #update} rewrites one line in place with {@code \r}; elsewhere (a log file, a
 * CI console) updates are dropped so the log is not flooded, and only {@link #line} is written. Scenarios
 * call both between timed blocks, never inside one, so reporting costs nothing in the measurements.
 */
public final class Progress {

    private final PrintStream err;
    private final boolean interactive;
    private int shown; // length of the line currently on screen, to blank its leftovers

    public Progress(PrintStream err, boolean interactive) {
        this.err = Objects.requireNonNull(err, "err");
        this.interactive = interactive;
    }

    /** Progress on {@link System#err}, interactive when stderr is a terminal. */
    public static Progress onStderr() {
        return new Progress(System.err, stderrIsTerminal());
    }

    /** Whether updates are shown (stderr is a terminal). */
    public boolean interactive() {
        return interactive;
    }

    /** Replaces the progress line; dropped when not interactive. */
    public synchronized void update(String text) {
        if (!interactive) {
            return;
        }
        StringBuilder b = new StringBuilder(text.length() + shown + 1).append('\r').append(text);
        for (int i = text.length(); i < shown; i++) {
            b.append(' ');
        }
        err.print(b);
        err.flush();
        shown = text.length();
    }

    /** Writes a line that stays (e.g. one per round), replacing the progress line if one is shown. */
    public synchronized void line(String text) {
        clear();
        err.println(text);
        err.flush();
    }

    /** Removes the progress line, leaving the cursor at the start of an empty line. */
    public synchronized void clear() {
        if (interactive && shown > 0) {
            err.print("\r" + " ".repeat(shown) + "\r");
            err.flush();
            shown = 0;
        }
    }

    /**
     * Java can ask whether the console is a terminal but not which stream: on Linux, fd 2 of this process
     * is a link to {@code /dev/pts/N} or {@code /dev/ttyN} exactly when stderr is a terminal. Elsewhere we
     * fall back to the console's answer (stdin and stdout).
     */
    static boolean stderrIsTerminal() {
        Path fd2 = Path.of("/proc/self/fd/2");
        try {
            if (Files.isSymbolicLink(fd2)) {
                String to = Files.readSymbolicLink(fd2).toString();
                return to.startsWith("/dev/pts/") || to.startsWith("/dev/tty");
            }
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            // not Linux, or not allowed to look: fall through
        }
        var console = System.console();
        return console != null && console.isTerminal();
    }
}
