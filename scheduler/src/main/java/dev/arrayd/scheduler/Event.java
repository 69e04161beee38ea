package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
 *
 * <p>A submitted command is its own event ({@link Command} extends this class): one object per command
 * instead of two. Events that stand alone (a transfer's, a settled stand-in) are plain instances.
 */
public sealed class Event permits Command {

    /** An event that has already succeeded; stands in for completed events the session forgot. */
    public static final Event SUCCEEDED = new Event(0, true);

    // the states (EventState's ordinals), kept in a byte rather than a reference: an event is made for every command
    private static final byte IS_PENDING = 0;
    private static final byte IS_SUCCEEDED = 1;
    private static final byte IS_FAILED = 2;
    private static final EventState[] STATES = {EventState.PENDING, EventState.SUCCEEDED, EventState.FAILED};
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Event.class, "state", byte.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final long id;
    private volatile byte state;
    // the failure once FAILED, what the command produced (or null) once SUCCEEDED: one field for both, since an
    // event is made for every command. While PENDING, a command's result-to-be (see Event(long, Object)).
    private Object outcome;
    // the device time once SUCCEEDED; a command writes it when its device calls back, before it settles
    long deviceNanos;
    // Listeners: the first inline (the common case is one dependent), the rest in a list.
    private EventListener first;
    private List<EventListener> more;

    public Event(long id) {
        this.id = id; // state: IS_PENDING (0) without a volatile write (a fence per command)
    }

    /** A pending event that will carry {@code result} if it succeeds ({@link #pendingResult()}). */
    Event(long id, Object result) {
        this.id = id;
        this.outcome = result;
    }

    private Event(long id, boolean succeeded) {
        this.id = id;
        this.state = succeeded ? IS_SUCCEEDED : IS_PENDING;
    }

    /** A failed event, e.g. for a command rejected after its id was registered. */
    public static Event failed(long id, ArraydException cause) {
        Event e = new Event(id);
        e.fail(cause);
        return e;
    }

    public final long id() {
        return id;
    }

    public final EventState state() {
        return STATES[state];
    }

    public final boolean isDone() {
        return state != IS_PENDING;
    }

    public final boolean isFailed() {
        return state == IS_FAILED;
    }

    /** The failure, when {@link #isFailed()}. */
    public final synchronized ArraydException failure() {
        return state == IS_FAILED ? (ArraydException) outcome : null;
    }

    /** Device execution time of the command, when it succeeded. */
    public final synchronized long deviceNanos() {
        return deviceNanos;
    }

    /** What the command produced (a download's bytes), or null. */
    public final synchronized Object result() {
        return state == IS_SUCCEEDED ? outcome : null;
    }

    /** The result given to {@link #Event(long, Object)}, while the event is pending (its settler's view). */
    final Object pendingResult() {
        return outcome;
    }

    /** Adds a listener; runs it now if the event is already done. */
    public final void onDone(EventListener listener) {
        synchronized (this) {
            if (state == IS_PENDING) {
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
    public final CompletableFuture<Event> toFuture() {
        CompletableFuture<Event> f = new CompletableFuture<>();
        onDone(f::complete);
        return f;
    }

    /** Marks success. Returns false (and changes nothing) if the event was already done. */
    public final boolean succeed(long deviceNanos, Object result) {
        return settle(IS_SUCCEEDED, deviceNanos, result, null);
    }

    /** Marks failure. Returns false (and changes nothing) if the event was already done. */
    public final boolean fail(ArraydException cause) {
        return settle(IS_FAILED, 0, null, cause);
    }

    private boolean settle(byte to, long nanos, Object value, ArraydException cause) {
        EventListener l;
        List<EventListener> rest;
        synchronized (this) {
            if (state != IS_PENDING) {
                return false;
            }
            deviceNanos = nanos;
            outcome = cause != null ? cause : value;
            // a release store: it publishes the two fields above to the volatile reads of state outside the lock, and
            // whoever reads state under the lock (onDone) is ordered by the lock; a volatile store would add a fence
            STATE.setRelease(this, to);
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
    public final String toString() {
        return "event " + id + " (" + state() + ")";
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
