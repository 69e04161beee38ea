package dev.arrayd.devices.api.support;

/** Waiting for a backend's own threads to end. */
public final class Joins {

    private Joins() {}

    /**
     * Waits until {@code thread} has ended, however often the caller is interrupted meanwhile (a
     * stream's close must not return while its worker may still call back); the caller's interrupt
     * status is set again afterwards if it was interrupted.
     */
    public static void uninterruptibly(Thread thread) {
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
