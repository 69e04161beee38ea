package dev.arrayd.scheduler;

import java.util.ArrayDeque;

/** Turns nested calls on one thread into a loop: work scheduled while running is queued, not nested. */
final class Trampoline {

    private static final ThreadLocal<ArrayDeque<Runnable>> QUEUE = new ThreadLocal<>();

    private Trampoline() {}

    static void run(Runnable task) {
        ArrayDeque<Runnable> q = QUEUE.get();
        if (q != null) {
            q.add(task);
            return;
        }
        q = new ArrayDeque<>();
        QUEUE.set(q);
        try {
            task.run();
            Runnable next;
            while ((next = q.poll()) != null) {
                next.run();
            }
        } finally {
            QUEUE.remove();
        }
    }
}
