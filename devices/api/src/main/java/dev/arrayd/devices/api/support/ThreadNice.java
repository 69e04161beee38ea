package dev.arrayd.devices.api.support;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Linux nice values of single threads: {@code gettid}, {@code getpriority} and {@code setpriority}
 * with {@code PRIO_PROCESS} and a thread id (NPTL keeps the nice value per thread), bound once
 * through the FFM linker. Shared by the CPU backend (its kernel threads) and the server (the JIT's
 * compiler threads). Raising a nice value needs no privilege; lowering one again does.
 */
public final class ThreadNice {

    /** Highest nice value Linux allows (lowest priority). */
    public static final int MAX = 19;

    private static final int PRIO_PROCESS = 0;
    private static final Calls CALLS = Calls.find();

    private ThreadNice() {}

    /** The libc functions, or the reason they could not be bound. */
    private record Calls(MethodHandle gettid, MethodHandle getpriority, MethodHandle setpriority, String problem) {

        static Calls find() {
            if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
                return new Calls(null, null, null, "not Linux (" + System.getProperty("os.name") + ")");
            }
            try {
                Linker linker = Linker.nativeLinker();
                SymbolLookup libc = linker.defaultLookup();
                Optional<MemorySegment> gettid = libc.find("gettid");
                Optional<MemorySegment> get = libc.find("getpriority");
                Optional<MemorySegment> set = libc.find("setpriority");
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

    /** Why nice values cannot be read or changed here; empty where they can. */
    public static Optional<String> problem() {
        return Optional.ofNullable(CALLS.problem());
    }

    /** The calling thread's id, or empty where it cannot be read. */
    public static OptionalInt currentTid() {
        if (CALLS.problem() != null) {
            return OptionalInt.empty();
        }
        try {
            return OptionalInt.of((int) CALLS.gettid().invokeExact());
        } catch (Throwable t) {
            return OptionalInt.empty();
        }
    }

    /** Thread {@code tid}'s nice value, or empty where it cannot be read. */
    public static OptionalInt get(int tid) {
        if (CALLS.problem() != null) {
            return OptionalInt.empty();
        }
        try {
            // getpriority may return -1 as a value; callers only raise from it, which is still right
            return OptionalInt.of((int) CALLS.getpriority().invokeExact(PRIO_PROCESS, tid));
        } catch (Throwable t) {
            return OptionalInt.empty();
        }
    }

    /**
     * Raises thread {@code tid}'s nice value by {@code delta}, capped at {@link #MAX}; a value already
     * there is left as it is.
     *
     * @return the thread's nice value afterwards, or empty if it could not be read or changed
     */
    public static OptionalInt raise(int tid, int delta) {
        OptionalInt current = get(tid);
        if (current.isEmpty()) {
            return current;
        }
        int target = Math.min(MAX, current.getAsInt() + Math.max(0, delta));
        if (target <= current.getAsInt()) {
            return current;
        }
        try {
            return (int) CALLS.setpriority().invokeExact(PRIO_PROCESS, tid, target) == 0
                    ? OptionalInt.of(target) : OptionalInt.empty();
        } catch (Throwable t) {
            return OptionalInt.empty();
        }
    }
}
