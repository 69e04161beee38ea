package dev.arrayd.devices.api.testing;

import dev.arrayd.devices.api.support.LiveResources;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The invariants every test of the devices, the scheduler and the server must leave true, checked after
 * each test (after the class for a class marked {@link ResourcesPerClass}): every device ledger and every
 * scheduler made during the test is back to zero — no slab bytes allocated, no event pending
 * ({@link LiveResources}) — and no {@code arrayd-*} thread started during the test is still alive (each is
 * joined for up to {@value #JOIN_SECONDS} s first: a closing stream's worker ends on its own).
 *
 * <p>Registered for every test class through {@code META-INF/services} (JUnit's extension autodetection,
 * turned on in the build), wherever the devices API's test-jar is on the test class path.
 */
public final class InvariantsExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback,
        AfterEachCallback {

    /** How long a thread started by a test may take to end after it. */
    static final long JOIN_SECONDS = 30;

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(InvariantsExtension.class);

    private record Baseline(long mark, Set<Thread> threads) {}

    @Override
    public void beforeAll(ExtensionContext context) {
        if (perClass(context)) {
            context.getStore(NS).put("class", baseline());
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        if (!perClass(context)) {
            context.getStore(NS).put("test", baseline());
        }
    }

    @Override
    public void afterEach(ExtensionContext context) throws InterruptedException {
        if (!perClass(context) && context.getExecutionException().isEmpty()) {
            check(context.getStore(NS).get("test", Baseline.class), "this test");
        }
    }

    @Override
    public void afterAll(ExtensionContext context) throws InterruptedException {
        if (perClass(context)) {
            check(context.getStore(NS).get("class", Baseline.class), "this class");
        }
    }

    private static boolean perClass(ExtensionContext context) {
        return context.getTestClass().map(c -> c.isAnnotationPresent(ResourcesPerClass.class)
                || (c.getEnclosingClass() != null && c.getEnclosingClass().isAnnotationPresent(ResourcesPerClass.class)))
                .orElse(false);
    }

    private static Baseline baseline() {
        return new Baseline(LiveResources.mark(), Set.copyOf(arrayd()));
    }

    private static List<Thread> arrayd() {
        List<Thread> out = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("arrayd-")) {
                out.add(t);
            }
        }
        return out;
    }

    private static void check(Baseline before, String what) throws InterruptedException {
        if (before == null) {
            return;
        }
        List<Thread> leftovers = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(JOIN_SECONDS);
        for (Thread t : arrayd()) {
            if (!before.threads().contains(t)) {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                if (t.isAlive()) {
                    leftovers.add(t);
                }
            }
        }
        if (!leftovers.isEmpty()) {
            throw new AssertionError("threads started by " + what + " still alive " + JOIN_SECONDS + " s after it: "
                    + leftovers.stream().map(Thread::getName).collect(Collectors.joining(", ")));
        }
        List<String> held = LiveResources.leftoversSince(before.mark());
        if (!held.isEmpty()) {
            throw new AssertionError("resources made by " + what + " still hold memory or work: " + String.join("; ", held));
        }
    }
}
