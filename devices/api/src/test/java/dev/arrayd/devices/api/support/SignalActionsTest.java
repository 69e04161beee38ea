package dev.arrayd.devices.api.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class SignalActionsTest {

    private static final int SIGWINCH = 28; // nobody's in a JVM: its default action is to ignore it
    private static final long SIG_IGN = 1;

    @Test
    void aHandlerInstalledAfterTheActionsWereTakenIsPutBackAndOnlyThatOne() throws Throwable {
        var taken = SignalActions.take();
        if (taken.isEmpty()) {
            System.out.println("[signals] skipping: sigaction is not available here (" + System.getProperty("os.name") + ")");
        }
        Assumptions.assumeTrue(taken.isPresent(), "sigaction unavailable");
        SignalActions jvm = taken.orElseThrow();
        assertEquals(List.of(), jvm.restoreChanged(), "nothing changed yet");
        long before = jvm.handler(SIGWINCH);
        install(SIGWINCH, before == SIG_IGN ? 0 : SIG_IGN); // what a native library does
        assertNotEquals(before, SignalActions.take().orElseThrow().handler(SIGWINCH));
        assertEquals(List.of(SIGWINCH), jvm.restoreChanged());
        assertEquals(before, SignalActions.take().orElseThrow().handler(SIGWINCH));
        assertEquals(List.of(), jvm.restoreChanged());
    }

    /** {@code sigaction(sig, {handler, empty mask, no flags}, NULL)}. */
    private static void install(int sig, long handler) throws Throwable {
        Linker linker = Linker.nativeLinker();
        MethodHandle sigaction = linker.downcallHandle(linker.defaultLookup().find("sigaction").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment act = arena.allocate(256, 16); // zeroed: empty mask, no flags
            act.set(ValueLayout.JAVA_LONG, 0, handler);
            assertEquals(0, (int) sigaction.invokeExact(sig, act, MemorySegment.NULL));
        }
    }
}
