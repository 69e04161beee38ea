package dev.arrayd.client;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Where and after what a copy, fill, upload or download runs. Immutable; start from {@link #defaults()}.
 *
 * @param waitFor events that must complete first; default none (buffer hazards are still ordered by the
 *                daemon)
 * @param stream  stream to run on; 0 (the default) = the session's default stream of the buffer's device
 * @param wholePadded copies, fills, uploads and downloads address padded buffers' whole padded arrays
 *                    (offsets and sizes over their memory) instead of their interiors; default {@code false}
 * @param deadline when the command must have started; null (the default) = none. One that has not started by then
 *                 fails with DEADLINE_EXCEEDED instead of running, and so does everything waiting for it
 */
public record CommandOptions(List<Long> waitFor, long stream, boolean wholePadded, Instant deadline) {
    private static final CommandOptions DEFAULTS = new CommandOptions(List.of(), 0, false, null);

    public CommandOptions(List<Long> waitFor, long stream) {
        this(waitFor, stream, false, null);
    }

    /** Addresses padded buffers' whole padded arrays (true) or their interiors (false, the default). */
    public CommandOptions wholePadded(boolean whole) {
        return new CommandOptions(waitFor, stream, whole, deadline);
    }

    /** Must have started by {@code deadline} (null: no deadline). */
    public CommandOptions deadline(Instant deadline) {
        return new CommandOptions(waitFor, stream, wholePadded, deadline);
    }

    public CommandOptions {
        waitFor = List.copyOf(waitFor);
        if (stream < 0) {
            throw new IllegalArgumentException("stream: " + stream + " (expected: >= 0)");
        }
    }

    /** No waits, default stream. */
    public static CommandOptions defaults() {
        return DEFAULTS;
    }

    /** Adds events that must complete first. */
    public CommandOptions waitFor(Event... events) {
        List<Long> next = new ArrayList<>(waitFor);
        for (Event e : events) {
            next.add(e.id());
        }
        return new CommandOptions(next, stream, wholePadded, deadline);
    }

    /** Runs on {@code stream}. */
    public CommandOptions on(StreamHandle stream) {
        return new CommandOptions(waitFor, stream.id(), wholePadded, deadline);
    }
}
