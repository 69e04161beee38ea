package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import org.junit.jupiter.api.Test;

class TaskGraphTest {

    private static TaskGraph graph(String name) {
        return TaskGraph.standard().stream().filter(g -> g.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void firstTimestepHasNoDependencies() {
        for (TaskGraph g : TaskGraph.standard()) {
            assertArrayEquals(new int[0], g.deps(0, 3, 8), g.name());
        }
    }

    @Test
    void stencilIsTheNeighboursClippedAtTheEdges() {
        assertArrayEquals(new int[] {0, 1}, graph("stencil_1d").deps(1, 0, 8));
        assertArrayEquals(new int[] {3, 4, 5}, graph("stencil_1d").deps(1, 4, 8));
        assertArrayEquals(new int[] {6, 7}, graph("stencil_1d").deps(1, 7, 8));
    }

    @Test
    void nearestHasRadixColumnsCentredOnTheTask() {
        assertArrayEquals(new int[0], graph("nearest_0").deps(1, 4, 16));
        assertArrayEquals(new int[] {4}, graph("nearest_1").deps(1, 4, 16));
        assertArrayEquals(new int[] {3, 4, 5}, graph("nearest_3").deps(1, 4, 16));
        assertArrayEquals(new int[] {2, 3, 4, 5, 6}, graph("nearest_5").deps(1, 4, 16));
        assertArrayEquals(new int[] {0, 1, 2, 3, 4, 5, 6, 7, 8}, graph("nearest_9").deps(1, 4, 16));
        assertArrayEquals(new int[] {0, 1}, graph("nearest_9").deps(1, 0, 2));
    }

    @Test
    void spreadShiftsWithTheTimestep() {
        // width 9, radix 3: step 3, starting at x + t
        assertArrayEquals(new int[] {2, 5, 8}, graph("spread_3").deps(1, 1, 9));
        assertArrayEquals(new int[] {0, 3, 6}, graph("spread_3").deps(2, 1, 9));
    }

    @Test
    void fftIsAButterflyWithGrowingStride() {
        TaskGraph fft = graph("fft");
        assertArrayEquals(new int[] {2, 4}, fft.deps(1, 3, 8));
        assertArrayEquals(new int[] {1, 5}, fft.deps(2, 3, 8));
        assertArrayEquals(new int[] {7}, fft.deps(3, 3, 8));
        assertArrayEquals(new int[] {2, 4}, fft.deps(4, 3, 8));
        assertArrayEquals(new int[] {1}, fft.deps(1, 0, 2));
    }
}
