package dev.arrayd.devices.api.support;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The process's signal actions, taken before native code that may replace them and put back after it.
 *
 * <p>Why: the JVM handles SIGSEGV, SIGBUS, SIGFPE and SIGILL itself (implicit null checks, stack banging,
 * safepoints), SIGTERM, SIGINT and SIGHUP for its shutdown hooks, SIGQUIT for thread dumps and SIGUSR2 for thread
 * suspension. A native library that installs handlers of its own over them breaks the JVM: LLVM, which PoCL's CPU
 * driver runs, installs its crash handlers when the driver initializes its devices ({@code clGetDeviceIDs}), and
 * from then on the next fault the JVM expects kills the process with a bare "Segmentation fault", and SIGTERM ends
 * it without its shutdown hooks. A library that keeps running without its handlers (LLVM only uses them to report
 * a crash) is made harmless by putting the JVM's back as soon as it returns.
 *
 * <p>Only on Linux (the layout of {@code struct sigaction} is glibc's and musl's, at most {@value #ACTION_BYTES}
 * bytes); elsewhere {@link #take()} is empty.
 */
public final class SignalActions {

    /** The standard signals (1..31); real-time signals are nobody's here. */
    private static final int SIGNALS = 31;
    /** Room for one {@code struct sigaction} (152 bytes on x86_64 and aarch64 glibc). */
    private static final long ACTION_BYTES = 256;
    private static final int SIGKILL = 9;
    private static final int SIGSTOP = 19;

    private static final MethodHandle SIGACTION = sigaction();

    private final MemorySegment actions;

    private SignalActions(MemorySegment actions) {
        this.actions = actions;
    }

    private static MethodHandle sigaction() {
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return null;
        }
        Linker linker = Linker.nativeLinker();
        return linker.defaultLookup().find("sigaction").map(address -> linker.downcallHandle(address,
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                        ValueLayout.ADDRESS))).orElse(null);
    }

    /** The actions of every standard signal now; empty where they cannot be read (not Linux). */
    public static Optional<SignalActions> take() {
        if (SIGACTION == null) {
            return Optional.empty();
        }
        MemorySegment actions = Arena.ofAuto().allocate(SIGNALS * ACTION_BYTES, 16);
        for (int sig = 1; sig <= SIGNALS; sig++) {
            if (call(sig, MemorySegment.NULL, slot(actions, sig)) != 0) {
                return Optional.empty();
            }
        }
        return Optional.of(new SignalActions(actions));
    }

    /**
     * Puts back the action of every signal whose handler is no longer the one taken; returns those signals
     * (empty when nothing changed).
     */
    public List<Integer> restoreChanged() {
        List<Integer> restored = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment now = arena.allocate(ACTION_BYTES, 16);
            for (int sig = 1; sig <= SIGNALS; sig++) {
                if (sig == SIGKILL || sig == SIGSTOP) {
                    continue;
                }
                now.fill((byte) 0);
                MemorySegment taken = slot(actions, sig);
                if (call(sig, MemorySegment.NULL, now) == 0
                        && now.get(ValueLayout.JAVA_LONG, 0) != taken.get(ValueLayout.JAVA_LONG, 0)
                        && call(sig, taken, MemorySegment.NULL) == 0) {
                    restored.add(sig);
                }
            }
        }
        return restored;
    }

    /** The handler of {@code sig} (its {@code sa_handler} / {@code sa_sigaction} address) when taken. */
    public long handler(int sig) {
        if (sig < 1 || sig > SIGNALS) {
            throw new IllegalArgumentException("sig: " + sig + " (expected: 1 to " + SIGNALS + ")");
        }
        return slot(actions, sig).get(ValueLayout.JAVA_LONG, 0);
    }

    private static MemorySegment slot(MemorySegment actions, int sig) {
        return actions.asSlice((sig - 1) * ACTION_BYTES, ACTION_BYTES);
    }

    private static int call(int sig, MemorySegment act, MemorySegment old) {
        try {
            return (int) SIGACTION.invokeExact(sig, act, old);
        } catch (Throwable t) {
            throw new IllegalStateException("sigaction(" + sig + "): " + t, t);
        }
    }
}
