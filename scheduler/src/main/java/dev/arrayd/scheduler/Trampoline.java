package dev.arrayd.scheduler;

import java.util.ArrayDeque;

/**
 * Turns nested calls on one thread into a loop: work scheduled while a trampolined task runs is
 * queued and runs after it, not inside it. Completions and fast-path runs go through here, which
 * gives two guarantees: a long chain of failures or short commands cannot overflow the stack, and
 * every listener of an event has run before any command that event released runs on this thread.
 * Inline launches queue here too ({@link #runLaunch}): while one waits its turn, another worth a
 * hand-off runs beside it on its lane's worker instead.
 */
final class Trampoline {

    private static final class State {
        final ArrayDeque<Runnable> queue = new ArrayDeque<>();
        boolean running;
        // the launch queued last and not yet begun (null when none is): launches begin in queue order, so while
        // it is set at least one inline launch is waiting its turn on this thread
        Runnable queuedLaunch;
        // whether the running loop began with a command's completion (see runCompletion), and whether it has taken
        // the one launch such a loop runs inline past the plain fast-path bound
        boolean completing;
        boolean longLaunchTaken;
    }

    private static final ThreadLocal<State> STATE = ThreadLocal.withInitial(State::new);

    private Trampoline() {}

    static void run(Runnable task) {
        State st = STATE.get();
        if (st.running) {
            st.queue.add(task);
            return;
        }
        drain(st, task);
    }

    /**
     * A command's end after its device finished it, trampolined as {@link #run}. When this begins the loop,
     * the thread is one completing the device's work (a completion thread, a worker calling back, never a
     * transport thread: a command run inline there ends inside the loop its submission began), and
     * {@link #mayTakeLongLaunch()} tells while the loop runs.
     */
    static void runCompletion(Runnable end) {
        State st = STATE.get();
        if (st.running) {
            st.queue.add(end);
            return;
        }
        st.completing = true;
        drain(st, end);
    }

    /**
     * Whether this thread runs a loop that began with a command's completion (see {@link #runCompletion}) and
     * has not taken its launch past the plain fast-path bound yet ({@link #runLaunch} takes it): one per loop,
     * so that a chain of such launches, each made ready by the one before, does not keep the thread from the
     * completions waiting for it (a device's completion thread serves all its streams).
     */
    static boolean mayTakeLongLaunch() {
        State st = STATE.get();
        return st.running && st.completing && !st.longLaunchTaken;
    }

    /**
     * An inline launch, trampolined as {@link #run}: unless this thread already has a launch queued that has
     * not begun and this one is worth a hand-off ({@link Command#worthRunningBeside}). Then nothing is queued
     * and this returns false: the caller hands the launch to its lane's worker, where it runs beside the
     * queued one instead of after it (two commands made ready by one completion, e.g. the next step of two
     * columns, then use two cores). A launch past the plain fast-path bound that is queued takes its loop's
     * one such launch ({@link #mayTakeLongLaunch}).
     */
    static boolean runLaunch(Command launch) {
        State st = STATE.get();
        if (!st.running) {
            drain(st, launch);
            return true;
        }
        if (st.queuedLaunch != null && launch.worthRunningBeside()) {
            return false;
        }
        if (launch.longInline()) {
            st.longLaunchTaken = true;
        }
        st.queue.add(launch);
        st.queuedLaunch = launch;
        return true;
    }

    private static void drain(State st, Runnable first) {
        st.running = true;
        try {
            first.run();
            Runnable next;
            while ((next = st.queue.poll()) != null) {
                if (next == st.queuedLaunch) {
                    st.queuedLaunch = null;
                }
                next.run();
            }
        } finally {
            st.running = false;
            st.completing = false;
            st.longLaunchTaken = false;
            st.queue.clear();
            st.queuedLaunch = null;
        }
    }
}
