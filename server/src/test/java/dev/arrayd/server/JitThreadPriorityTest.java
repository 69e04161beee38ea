package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** {@code --jit-nice}: the JVM's optimizing compiler threads are found by name and lowered; no other thread is. */
class JitThreadPriorityTest {

    private static final Path TASKS = Path.of("/proc/self/task");

    @Test
    void namesOfCompilerThreadsAsTheKernelShortensThem() {
        assertTrue(JitThreadPriority.isCompilerThread("C2 CompilerThre"));
        assertTrue(JitThreadPriority.isCompilerThread("C1 CompilerThre"));
        assertTrue(JitThreadPriority.isCompilerThread("JVMCI-native Co"));
        assertFalse(JitThreadPriority.isCompilerThread("GC Thread#0"));
        assertFalse(JitThreadPriority.isCompilerThread("grpc-default-wo"));
        assertFalse(JitThreadPriority.isCompilerThread("arrayd-cpu0-str"));
        assertTrue(JitThreadPriority.isOptimizingCompilerThread("C2 CompilerThre"));
        assertTrue(JitThreadPriority.isOptimizingCompilerThread("JVMCI-native Co"));
        assertFalse(JitThreadPriority.isOptimizingCompilerThread("C1 CompilerThre"), "the quick tier keeps its priority");
    }

    @Test
    void compilerCpuTimeCountsTheCompilerThreads() {
        assumeTrue(Files.isDirectory(TASKS), "needs /proc (Linux)");
        // a test JVM has compiled for far more than one 10 ms tick by the time a test runs
        assertTrue(JitThreadPriority.compilerCpuMillis() > 0);
    }

    @Test
    void lowersEveryOptimizingCompilerThreadOnceAndLeavesTheOthers() throws IOException {
        assumeTrue(Files.isDirectory(TASKS), "needs /proc (Linux)");
        Map<Integer, Integer> before = nices(false);
        Map<Integer, Integer> compilerBefore = nices(true);
        assumeTrue(!compilerBefore.isEmpty(), "this JVM runs no optimizing JIT compiler thread (-XX:TieredStopAtLevel?)");

        JitThreadPriority jit = new JitThreadPriority(2);
        assertTrue(jit.apply() > 0, "no compiler thread lowered of " + compilerBefore);
        assertLowered(compilerBefore);
        nices(false).forEach((tid, nice) -> {
            Integer was = before.get(tid);
            if (was != null) {
                assertEquals(was, nice, "thread " + tid + " (" + JitThreadPriority.name(TASKS.resolve(tid.toString()))
                        + ") is no compiler thread and keeps its nice value");
            }
        });

        jit.apply(); // the JVM may have started another compiler thread meanwhile: that one is lowered
        assertLowered(compilerBefore); // ... but no thread twice
    }

    /** Every compiler thread of {@code before} still alive has its nice value raised by exactly 2. */
    private static void assertLowered(Map<Integer, Integer> before) throws IOException {
        nices(true).forEach((tid, nice) -> {
            Integer was = before.get(tid);
            if (was != null) {
                assertEquals(Math.min(19, was + 2), nice, "compiler thread " + tid);
            }
        });
    }

    /** Nice value per thread id, of the optimizing compiler threads ({@code compilers}) or of all others. */
    private static Map<Integer, Integer> nices(boolean compilers) throws IOException {
        try (Stream<Path> tasks = Files.list(TASKS)) {
            List<Path> list = tasks.filter(t -> JitThreadPriority.isOptimizingCompilerThread(JitThreadPriority.name(t)) == compilers)
                    .toList();
            return list.stream().map(t -> Map.entry(Integer.parseInt(t.getFileName().toString()), JitThreadPriority.nice(t)))
                    .filter(e -> e.getValue().isPresent())
                    .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().orElseThrow()));
        }
    }

}
