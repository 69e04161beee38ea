package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class SummaryTest {

    @Test
    void nearestRankPercentilesOfOneToHundredMicros() {
        long[] nanos = new long[100];
        for (int i = 0; i < nanos.length; i++) {
            nanos[nanos.length - 1 - i] = (i + 1) * 1_000L; // unsorted on purpose
        }
        Summary s = Summary.ofNanos(nanos);
        assertEquals(new Summary(100, 50.0, 90.0, 99.0, 50.5, 1.0, 100.0), s);
    }

    @Test
    void oneSampleIsEveryPercentile() {
        assertEquals(new Summary(1, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0), Summary.ofNanos(new long[] {7_000}));
    }
}
