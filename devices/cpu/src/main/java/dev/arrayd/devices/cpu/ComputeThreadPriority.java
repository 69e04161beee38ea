package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.support.ThreadNice;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;
import java.util.OptionalInt;

/**
 * Lowers the scheduling priority of the threads that run kernels, so that the daemon's control plane
 * (gRPC transport, dispatch, completions) and the programs beside it win a contended core from them.
 *
 * <p>On a host whose cores are all given to CPU devices, a kernel thread and a transport thread
 * compete for the same cores; at equal priority a polite client's message can wait for a time slice
 * of a flooding client's kernel (milliseconds). A kernel thread at a higher nice value still gets
 * every idle cycle (so a device's throughput on an otherwise idle host is unchanged), but a waking
 * thread of normal priority preempts it at once. It is also what a sidecar should do: the CPU device
 * yields to the application it sits beside.
 *
 * <p>Linux keeps the nice value per thread (NPTL), so {@code setpriority(PRIO_PROCESS, gettid(), n)}
 * changes the calling thread alone. Raising one's nice value needs no privilege. Where this is not
 * Linux or the calls are missing, it does nothing and says so once in the log.
 */
final class ComputeThreadPriority {

    private static final Logger log = LoggerFactory.getLogger(ComputeThreadPriority.class);

    /** Highest nice value Linux allows (lowest priority). */
    static final int MAX_NICE = ThreadNice.MAX;

    private ComputeThreadPriority() {}

    /**
     * Raises the calling thread's nice value by {@code delta} (capped at {@link #MAX_NICE}); 0 leaves it.
     *
     * @return the thread's nice value afterwards, or empty if it could not be read or changed
     */
    static Optional<Integer> lowerCurrentThread(int delta) {
        if (delta <= 0) {
            return Optional.empty();
        }
        Optional<String> problem = ThreadNice.problem();
        if (problem.isPresent()) {
            warnOnce("kernel threads keep their priority: " + problem.get());
            return Optional.empty();
        }
        OptionalInt tid = ThreadNice.currentTid();
        OptionalInt after = tid.isPresent() ? ThreadNice.raise(tid.getAsInt(), delta) : OptionalInt.empty();
        if (after.isEmpty()) {
            warnOnce("kernel threads keep their priority: setpriority(" + (tid.isPresent() ? tid.getAsInt() : "?")
                    + ", +" + delta + ") failed");
            return Optional.empty();
        }
        return Optional.of(after.getAsInt());
    }

    /** Whether nice values can be read and changed here (Linux, with the C library's calls found). */
    static boolean supported() {
        return ThreadNice.problem().isEmpty();
    }

    /** The calling thread's Linux thread id, or empty where it cannot be read. */
    static Optional<Integer> currentTid() {
        OptionalInt tid = ThreadNice.currentTid();
        return tid.isPresent() ? Optional.of(tid.getAsInt()) : Optional.empty();
    }

    /** The calling thread's nice value, or empty where it cannot be read (for tests and diagnostics). */
    static Optional<Integer> currentNice() {
        OptionalInt tid = ThreadNice.currentTid();
        OptionalInt nice = tid.isPresent() ? ThreadNice.get(tid.getAsInt()) : OptionalInt.empty();
        return nice.isPresent() ? Optional.of(nice.getAsInt()) : Optional.empty();
    }

    private static volatile boolean warned;

    private static void warnOnce(String message) {
        if (!warned) {
            warned = true;
            log.warn(message);
        }
    }
}
