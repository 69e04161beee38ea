package dev.arrayd.devices.cpu;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

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
    static final int MAX_NICE = 19;

    private static final int PRIO_PROCESS = 0;
    private static final Calls CALLS = Calls.find();

    private ComputeThreadPriority() {}

    /** The libc functions, or the reason they could not be bound. */
    private record Calls(MethodHandle gettid, MethodHandle getpriority, MethodHandle setpriority, String problem) {

        static Calls find() {
            if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
                return new Calls(null, null, null, "not Linux (" + System.getProperty("os.name") + ")");
            }
            try {
                Linker linker = Linker.nativeLinker();
                SymbolLookup libc = linker.defaultLookup();
                Optional<java.lang.foreign.MemorySegment> gettid = libc.find("gettid");
                Optional<java.lang.foreign.MemorySegment> get = libc.find("getpriority");
                Optional<java.lang.foreign.MemorySegment> set = libc.find("setpriority");
                if (gettid.isEmpty() || get.isEmpty() || set.isEmpty()) {
                    return new Calls(null, null, null, "gettid/getpriority/setpriority not found in the C library");
                }
                return new Calls(
                        linker.downcallHandle(gettid.get(), FunctionDescriptor.of(ValueLayout.JAVA_INT)),
                        linker.downcallHandle(get.get(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                                ValueLayout.JAVA_INT, ValueLayout.JAVA_INT)),
                        linker.downcallHandle(set.get(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                                ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT)),
                        null);
            } catch (RuntimeException e) {
                return new Calls(null, null, null, e.toString());
            }
        }
    }

    /**
     * Raises the calling thread's nice value by {@code delta} (capped at {@link #MAX_NICE}); 0 leaves it.
     *
     * @return the thread's nice value afterwards, or empty if it could not be read or changed
     */
    static Optional<Integer> lowerCurrentThread(int delta) {
        if (delta <= 0) {
            return Optional.empty();
        }
        if (CALLS.problem() != null) {
            warnOnce("kernel threads keep their priority: " + CALLS.problem());
            return Optional.empty();
        }
        try {
            int tid = (int) CALLS.gettid().invokeExact();
            // getpriority may return -1 as a value; a nice of -1 raised by delta is still what we want
            int current = (int) CALLS.getpriority().invokeExact(PRIO_PROCESS, tid);
            int target = Math.min(MAX_NICE, current + delta);
            if (target <= current) {
                return Optional.of(current);
            }
            int rc = (int) CALLS.setpriority().invokeExact(PRIO_PROCESS, tid, target);
            if (rc != 0) {
                warnOnce("kernel threads keep their priority: setpriority(" + tid + ", " + target + ") failed");
                return Optional.empty();
            }
            return Optional.of(target);
        } catch (Throwable t) {
            warnOnce("kernel threads keep their priority: " + t);
            return Optional.empty();
        }
    }

    /** Whether nice values can be read and changed here (Linux, with the C library's calls found). */
    static boolean supported() {
        return CALLS.problem() == null;
    }

    /** The calling thread's Linux thread id, or empty where it cannot be read. */
    static Optional<Integer> currentTid() {
        if (CALLS.problem() != null) {
            return Optional.empty();
        }
        try {
            return Optional.of((int) CALLS.gettid().invokeExact());
        } catch (Throwable t) {
            return Optional.empty();
        }
    }

    /** The calling thread's nice value, or empty where it cannot be read (for tests and diagnostics). */
    static Optional<Integer> currentNice() {
        if (CALLS.problem() != null) {
            return Optional.empty();
        }
        try {
            int tid = (int) CALLS.gettid().invokeExact();
            return Optional.of((int) CALLS.getpriority().invokeExact(PRIO_PROCESS, tid));
        } catch (Throwable t) {
            return Optional.empty();
        }
    }

    private static volatile boolean warned;

    private static void warnOnce(String message) {
        if (!warned) {
            warned = true;
            log.warn(message);
        }
    }
}
