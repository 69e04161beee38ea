package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Placement counts a device's own transfer figures: moving a buffer to a device behind a slow link (a peer's,
 * across the network) costs what the device reports, from the host or from another device; a device without a
 * figure of its own costs the scheduler's assumption.
 */
class PlacementTransferCostTest {

    /** A device as the scheduler sees it, whose host transfers cost {@code nanosPerByte}. */
    private static final class SlowLink extends DelegatingDevice {
        private final double nanosPerByte;

        SlowLink(Device d, double nanosPerByte) {
            super(d);
            this.nanosPerByte = nanosPerByte;
        }

        @Override
        public double hostTransferNanosPerByte() {
            return nanosPerByte;
        }

        @Override
        public double copyNanosPerByte(Device src) {
            return nanosPerByte;
        }
    }

    /**
     * Three devices, the first behind a slow link ({@code nanosPerByte} to move data in, from the host or from
     * another device); a 1 MiB buffer current on the third. Placement's cost of making it current on each of the
     * first two (what {@link Placement#place} adds up per device).
     */
    private double[] costs(double nanosPerByte) throws Exception {
        SchedulerFixture f = new SchedulerFixture(3, 1L << 26, 1L << 22, 0, System::nanoTime,
                (i, d) -> i == 0 ? new SlowLink(d, nanosPerByte) : d);
        try {
            return costs(f, nanosPerByte);
        } finally {
            f.close();
        }
    }

    private static double[] costs(SchedulerFixture f, double nanosPerByte) throws Exception {
        Scheduler sch = f.scheduler;
        Session s = sch.openSession("placement", 10_000);
        long n = 1 << 17;
        Buffer input = sch.createBuffer(s, DType.I64, new long[] {n}, "null:2", "", MemoryMode.DEVICE);
        Event up = sch.submit(s, List.of(new CommandSpec(1, null, 0, new CommandSpec.UploadOp(input.handle(), 0,
                java.lang.foreign.MemorySegment.ofArray(new long[(int) n]), false))), null).getFirst().toFuture()
                .get(10, TimeUnit.SECONDS);
        assertEquals(EventState.SUCCEEDED, up.state(), () -> String.valueOf(up.failure()));
        List<DeviceRuntime> d = sch.devices();
        double[] out = {Coherence.transferNanos(input, d.get(0)), Coherence.transferNanos(input, d.get(1))};
        sch.closeSession(s);
        return out;
    }

    @Test
    void aSlowLinkCostsWhatItReports() throws Exception {
        double bytes = 1 << 20;
        double[] slow = costs(50);
        double[] plain = costs(Double.NaN);
        assertEquals(plain[1], slow[1], "the other device's cost is its own");
        assertEquals(plain[0], slow[1], "without a figure of its own the first device costs the same");
        assertTrue(slow[0] >= 50 * bytes, () -> "the slow link: " + slow[0] + " ns for 1 MiB");
        assertTrue(slow[0] > 50 * plain[0], () -> slow[0] + " vs " + plain[0]);
    }
}
