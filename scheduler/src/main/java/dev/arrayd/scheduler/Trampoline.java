package dev.arrayd.scheduler;

import java.util.ArrayDeque;

/**
 * Turns nested calls on one thread into a loop: work scheduled while a trampolined task runs is
 * queued and runs after it, not inside it. Completions and fast-path runs go through here, which
 * gives two guarantees: a long chain of failures or short commands cannot overflow the stack, and
 * every listener of an event has run before any command that event released runs on this thread.
 */
final class Trampoline {

    private static final class State {
        final ArrayDeque<Runnable> queue = new ArrayDeque<>();
        boolean running;
    }

    private static final ThreadLocal<State> STATE = ThreadLocal.withInitial(State::new);

    private Trampoline() {}

    static void run(Runnable task) {
        State st = STATE.get();
        if (st.running) {
            st.queue.add(task);
            return;
        }
        st.running = true;
        try {
            task.run();
            Runnable next;
            while ((next = st.queue.poll()) != null) {
                next.run();
            }
        } finally {
            st.running = false;
            st.queue.clear();
        }
    }
}
