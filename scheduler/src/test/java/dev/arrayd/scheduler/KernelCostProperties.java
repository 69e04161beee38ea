package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;

/** The kernel cost's decaying maximum against a plain model of it, sample by sample. */
class KernelCostProperties {

    @Property(tries = 200)
    void estimateIsTheDecayingMaximumOfEachSampleAndTheOneBeforeItsSmallerAfterTheFirst(
            @ForAll @Size(max = 40) List<@LongRange(min = 0, max = 10_000_000) Long> nanos,
            @ForAll @IntRange(min = 1, max = 1 << 20) int items, @ForAll @IntRange(min = 0, max = 1 << 20) int asked) {
        KernelCost cost = new KernelCost();
        double model = Double.NaN;
        double last = Double.NaN;
        for (int i = 0; i < nanos.size(); i++) {
            cost.record(nanos.get(i), items);
            if (i > 0) { // the first sample pays for loading: skipped
                double sample = (double) nanos.get(i) / items;
                double perItem = Double.isNaN(last) ? sample : Math.min(sample, last);
                last = sample;
                model = Double.isNaN(model) ? perItem : Math.max(perItem, model * 0.875);
            }
            double expected = Double.isNaN(model) ? Double.POSITIVE_INFINITY : model * asked;
            assertEquals(expected, cost.estimateNanos(asked), "after sample " + i);
        }
    }

    @Property(tries = 100)
    void oneSlowRunAmongFastOnesLeavesTheEstimateAtTheFastOnesAndTwoInARowRaiseIt(
            @ForAll @IntRange(min = 2, max = 30) int fastBefore, @ForAll @LongRange(min = 1, max = 10_000) long fast,
            @ForAll @IntRange(min = 2, max = 1000) int slowness) {
        KernelCost cost = new KernelCost();
        for (int i = 0; i < fastBefore; i++) {
            cost.record(fast, 1);
        }
        cost.record(fast * slowness, 1); // a worker preempted mid-kernel, once
        cost.record(fast, 1);
        assertEquals(fast, cost.estimateNanos(1), "after one slow run");
        cost.record(fast * slowness, 1);
        cost.record(fast * slowness, 1); // slow twice in a row: the kernel's own cost now
        assertEquals(fast * slowness, cost.estimateNanos(1), "after two slow runs in a row");
    }

    @Property(tries = 50)
    void concurrentSamplesLeaveAMaximumOneOfThemCouldHaveSet(@ForAll @IntRange(min = 1, max = 1000) int perThread)
            throws InterruptedException {
        KernelCost cost = new KernelCost();
        cost.record(1, 1); // the skipped first sample
        Thread[] threads = new Thread[2];
        for (int t = 0; t < threads.length; t++) {
            long base = (t + 1) * 1000L;
            threads[t] = new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    cost.record(base, 1);
                }
            });
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        // every sample is 1000 or 2000 per item and the maximum decays only by the factor per sample: it ends
        // between the smallest sample and the largest, never lost to NaN or a torn value
        double e = cost.estimateNanos(1);
        org.junit.jupiter.api.Assertions.assertTrue(e >= 1000 * 0.875 && e <= 2000, "estimate " + e);
    }
}
