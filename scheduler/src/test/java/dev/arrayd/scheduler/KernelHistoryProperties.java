package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;

/**
 * {@link KernelHistory} estimates by the median of the last {@value KernelHistory#WINDOW} samples per work-item
 * (the very first launch skipped), whatever the order and repetition of the samples: checked after every sample
 * against the median computed from scratch.
 */
class KernelHistoryProperties {

    @Property(tries = 500)
    void estimatesByTheMedianOfTheLastSamples(
            @ForAll @Size(min = 1, max = 60) List<@LongRange(min = 0, max = 40) Long> nanos,
            @ForAll @IntRange(min = 1, max = 4) int items) {
        KernelHistory h = new KernelHistory();
        for (int i = 0; i < nanos.size(); i++) {
            h.record(nanos.get(i), items);
            int kept = Math.min(i, KernelHistory.WINDOW);
            assertEquals(kept, h.samples(), "samples after " + (i + 1));
            if (kept == 0) {
                assertTrue(Double.isNaN(h.estimateNanos(1)), "no estimate before a sample is kept");
                continue;
            }
            double[] last = new double[kept];
            for (int j = 0; j < kept; j++) {
                last[j] = (double) nanos.get(i - kept + 1 + j) / items;
            }
            Arrays.sort(last);
            double median = (kept & 1) == 1 ? last[kept / 2] : (last[kept / 2 - 1] + last[kept / 2]) / 2;
            assertEquals(median * 3, h.estimateNanos(3), 1e-9, "estimate after " + (i + 1) + " samples " + nanos);
        }
    }
}
