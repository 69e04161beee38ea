package dev.arrayd.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

class KernelLabelsTest {

    @Test
    void theFirstNamesGetALabelTheRestCountAsOtherAndLongNamesAreCut() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        KernelLabels labels = new KernelLabels(registry, 2);
        String longName = "k".repeat(100);
        labels.meters("vadd").record(true, 2_000_000_000L);
        labels.meters("vadd").record(false, 5_000_000_000L);
        labels.meters(longName).record(true, 1_000_000_000L);
        labels.meters("saxpy").record(true, 1_000_000_000L); // the third name: other
        labels.meters("other").record(true, 1_000_000_000L); // a kernel named "other" is other too
        assertSame(labels.meters(longName), labels.meters("k".repeat(64) + "different tail"));

        assertEquals(2, registry.get("arrayd.kernel.launches").tag("kernel", "vadd").counter().count());
        assertEquals(2.0, registry.get("arrayd.kernel.device").tag("kernel", "vadd").counter().count(), 1e-9,
                "only the launch that succeeded counts its device time");
        assertEquals(1, registry.get("arrayd.kernel.launches").tag("kernel", "k".repeat(64)).counter().count());
        assertEquals(2, registry.get("arrayd.kernel.launches").tag("kernel", "other").counter().count());
        assertEquals(3, registry.get("arrayd.kernel.launches").counters().size(), "two names and other");
    }
}
