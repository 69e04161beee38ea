package dev.arrayd.scheduler;

/**
 * Told once when a command of one session ends, whichever way (OkHttp's {@code EventListener}
 * habit: every submitted command gets exactly one end). Runs on the completing thread, which may be
 * a transport thread on the fast path: be fast (no locks, no per-call map lookups), never throw.
 */
@FunctionalInterface
public interface CommandObserver {

    CommandObserver NONE = (kind, kernel, device, stream, outcome, waitNanos, deviceNanos, bytes, submission) -> {};

    /**
     * Told when a command of this session is made, on the thread that submits it (the call's); what it
     * returns comes back as {@code submission} when the command finishes (a tracer keeps the call's trace
     * context this way). Null by default: nothing to keep.
     */
    default Object commandSubmitted() {
        return null;
    }

    /**
     * @param kernel      a launch's kernel (its entry point's name); null for other kinds
     * @param stream      the kind of stream it ran on
     * @param waitNanos   from submission to the start of its device work: dependencies and queueing
     *                    (end-to-end time minus device time)
     * @param deviceNanos device execution time; 0 unless it succeeded
     * @param bytes       bytes moved by a transfer (upload, download, copy); 0 for other kinds
     * @param submission  what {@link #commandSubmitted()} returned for this command
     */
    void commandFinished(CommandKind kind, String kernel, DeviceRuntime device, StreamKind stream, CommandOutcome outcome,
            long waitNanos, long deviceNanos, long bytes, Object submission);
}
