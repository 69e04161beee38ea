package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Completion of one command (OCANNL's event). Monotonic: PENDING goes to SUCCEEDED or FAILED
 * exactly once and never back. Failure is sticky: a command waiting on a failed event fails with
 * that cause instead of running.
 *
 * <p>Listeners added after completion run at once on the caller's thread; listeners present at
 * completion run on the completing thread, in the order they were added.
 */
public final class Event {

    /** An event that has already succeeded; stands in for completed events the session forgot. */
    public static final Event SUCCEEDED = new Event(0, true);

    private final long id;
    private volatile EventState state;
    // the failure once FAILED, what the command produced (or null) once SUCCEEDED: one field for both keeps the
    // event, made for every command, at 48 bytes
    private Object outcome;
    private long deviceNanos;
    // the command that settles it while that command is pending (for cancellation); null after
    volatile Command owner;
    // Listeners: the first inline (the common case is one dependent), the rest in a list.
    private EventListener first;
    private List<EventListener> more;

    public Event(long id) {
        this.id = id;
        this.state = EventState.PENDING;
    }

    private Event(long id, boolean succeeded) {
        this.id = id;
        this.state = succeeded ? EventState.SUCCEEDED : EventState.PENDING;
    }

    /** A failed event, e.g. for a command rejected after its id was registered. */
    public static Event failed(long id, ArraydException cause) {
        Event e = new Event(id);
        e.fail(cause);
        return e;
    }

    public long id() {
        return id;
    }

    public EventState state() {
        return state;
    }

    public boolean isDone() {
        return state != EventState.PENDING;
    }

    public boolean isFailed() {
        return state == EventState.FAILED;
    }

    /** The failure, when {@link #isFailed()}. */
    public synchronized ArraydException failure() {
        return state == EventState.FAILED ? (ArraydException) outcome : null;
    }

    /** Device execution time of the command, when it succeeded. */
    public synchronized long deviceNanos() {
        return deviceNanos;
    }

    /** What the command produced (a download's bytes), or null. */
    public synchronized Object result() {
        return state == EventState.SUCCEEDED ? outcome : null;
    }

    /** Adds a listener; runs it now if the event is already done. */
    public void onDone(EventListener listener) {
        synchronized (this) {
            if (state == EventState.PENDING) {
                if (first == null) {
                    first = listener;
                } else {
                    if (more == null) {
                        more = new ArrayList<>(2);
                    }
                    more.add(listener);
                }
                return;
            }
        }
        listener.onEvent(this);
    }

    /** A future view, for callers outside the hot path. */
    public CompletableFuture<Event> toFuture() {
        CompletableFuture<Event> f = new CompletableFuture<>();
        onDone(f::complete);
        return f;
    }

    /** Marks success. Returns false (and changes nothing) if the event was already done. */
    public boolean succeed(long deviceNanos, Object result) {
        return settle(EventState.SUCCEEDED, deviceNanos, result, null);
    }

    /** Marks failure. Returns false (and changes nothing) if the event was already done. */
    public boolean fail(ArraydException cause) {
        return settle(EventState.FAILED, 0, null, cause);
    }

    private boolean settle(EventState to, long nanos, Object value, ArraydException cause) {
        EventListener l;
        List<EventListener> rest;
        synchronized (this) {
            if (state != EventState.PENDING) {
                return false;
            }
            deviceNanos = nanos;
            outcome = cause != null ? cause : value;
            state = to;
            l = first;
            rest = more;
            first = null;
            more = null;
        }
        fire(l, rest);
        return true;
    }

    private void fire(EventListener l, List<EventListener> rest) {
        if (l != null) {
            l.onEvent(this);
        }
        if (rest != null) {
            for (EventListener r : rest) {
                r.onEvent(this);
            }
        }
    }

    @Override
    public String toString() {
        return "event " + id + " (" + state + ")";
    }

    /** Runs {@code action} once every event in {@code events} is done (at once when the list is empty). */
    static void whenAllDone(List<Event> events, Runnable action) {
        if (events.isEmpty()) {
            action.run();
            return;
        }
        java.util.concurrent.atomic.AtomicInteger left = new java.util.concurrent.atomic.AtomicInteger(events.size());
        for (Event e : events) {
            e.onDone(x -> {
                if (left.decrementAndGet() == 0) {
                    action.run();
                }
            });
        }
    }
}
