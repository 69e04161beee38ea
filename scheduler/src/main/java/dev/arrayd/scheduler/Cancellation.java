package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import java.util.ArrayList;
import java.util.List;

/**
 * Cancelling a session's commands: a queued one leaves its device's queue and fails at once; one still
 * waiting for its dependencies fails without running once they are done; one handed to its device is
 * offered back to it ({@code NativeStream.cancel}: a peer's device drops it if it has not started there),
 * else it finishes; either way its event fails with the cause. Whatever waits on them fails with that
 * cause (sticky failure).
 */
final class Cancellation {

    private Cancellation() {}

    /** Cancels the pending commands of {@code s} among {@code eventIds} (CANCELLED); returns how many. */
    static int cancel(Session s, long[] eventIds) {
        ArraydException cause = new ArraydException(ErrorCode.CANCELLED, "cancelled by the client");
        // first find them all: cancelling one may settle others that depend on it
        List<Command> found = new ArrayList<>(eventIds.length);
        for (long id : eventIds) {
            if (s.events.lookup(id) instanceof Command c && c.pending() && !c.isDone()) {
                found.add(c);
            }
        }
        cancelAll(found, cause);
        return found.size();
    }

    /** Cancels every pending command of {@code s} with {@code cause}; returns how many. */
    static int cancelPending(Session s, ArraydException cause) {
        List<Event> pending = new ArrayList<>();
        s.events.pendingEvents().forEach(pending::add);
        List<Command> found = new ArrayList<>(pending.size());
        for (Event e : pending) {
            if (e instanceof Command c && c.pending() && !c.isDone()) {
                found.add(c);
            }
        }
        cancelAll(found, cause);
        return found.size();
    }

    /**
     * Marks every one cancelled, then drops the queued ones (see {@link Command#markCancelled}): dropping
     * one settles its event, which may make another of them ready, and that one must find itself cancelled.
     */
    private static void cancelAll(List<Command> found, ArraydException cause) {
        List<Command> marked = new ArrayList<>(found.size());
        for (Command c : found) {
            if (c.markCancelled(cause)) {
                marked.add(c);
            }
        }
        marked.forEach(Command::dropIfQueued);
        marked.forEach(Command::cancelOnLane);
    }
}
