package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Placement counts a device's own transfer figures: a device behind a slow link (a peer's, across the network)
 * gets no launch whose argument must first be moved there, while the same burst is spread over two equal
 * devices.
 */
class PlacementTransferCostTest {

    /** A device as the scheduler sees it, whose host transfers cost {@code nanosPerByte}. */
    private record SlowLink(Device d, double nanosPerByte) implements Device {
        @Override
        public DeviceId id() {
            return d.id();
        }

        @Override
        public DeviceInfo info() {
            return d.info();
        }

        @Override
        public String backend() {
            return d.backend();
        }

        @Override
        public double hostTransferNanosPerByte() {
            return nanosPerByte;
        }

        @Override
        public void allocPool(int poolId, long bytes, long alignment) {
            d.allocPool(poolId, bytes, alignment);
        }

        @Override
        public void freePool(int poolId) {
            d.freePool(poolId);
        }

        @Override
        public void memsetZero(MemRef ref) {
            d.memsetZero(ref);
        }

        @Override
        public NativeStream newStream(String name) {
            return d.newStream(name);
        }

        @Override
        public void close() {
            d.close();
        }
    }

    SchedulerFixture f;

    @AfterEach
    void tearDown() {
        f.close();
    }

    /** Devices (by index) where each of 8 placed launches reading one 1 MiB host-resident buffer ran. */
    private int[] burst(double slowNanosPerByte) throws Exception {
        f = new SchedulerFixture(2, 1L << 26, 1L << 22, 0, System::nanoTime,
                (i, d) -> i == 1 ? new SlowLink(d, slowNanosPerByte) : d);
        Scheduler sch = f.scheduler;
        Session s = sch.openSession("placement", 10_000);
        Map<String, CompiledKernel> k = f.compileAll(s);
        long n = 1 << 17;
        Buffer input = sch.createBuffer(s, DType.I64, new long[] {n}, "", "", MemoryMode.HOSTED_CONSTANT);
        java.lang.foreign.MemorySegment data = java.lang.foreign.MemorySegment.ofArray(new long[(int) n]);
        sch.submit(s, List.of(new CommandSpec(1, null, 0, new CommandSpec.UploadOp(input.handle(), 0, data, false))), null)
                .getFirst().toFuture().get(10, TimeUnit.SECONDS);
        f.devices.forEach(TestDevice::hold); // nothing completes while the burst is placed: no history to go by
        List<Buffer> outs = new ArrayList<>();
        List<CommandSpec> launches = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Buffer out = sch.createBuffer(s, DType.I64, new long[] {n}, "", "", MemoryMode.DEVICE);
            outs.add(out);
            launches.add(new CommandSpec(10 + i, null, 0, new CommandSpec.LaunchOp(k.get("acc").handle(), new long[] {n},
                    null, List.of(SchedulerFixture.arg(input), SchedulerFixture.arg(out)), "")));
        }
        List<Event> events = sch.submit(s, launches, null);
        f.devices.forEach(TestDevice::open);
        for (Event e : events) {
            e.toFuture().get(10, TimeUnit.SECONDS);
        }
        int[] placed = new int[2];
        for (Buffer out : outs) {
            var states = sch.replicaStates(out);
            for (int d = 0; d < 2; d++) {
                if (states.get("null:" + d) == ReplicaState.MODIFIED) {
                    placed[d]++;
                }
            }
        }
        sch.closeSession(s);
        return placed;
    }

    @Test
    void aDeviceBehindASlowLinkGetsNoLaunchWhoseArgumentMustCrossIt() throws Exception {
        int[] placed = burst(50);
        assertEquals(8, placed[0], () -> "launches per device: " + java.util.Arrays.toString(placed));
    }

    @Test
    void equalDevicesShareTheBurst() throws Exception {
        int[] placed = burst(Double.NaN);
        assertEquals(8, placed[0] + placed[1]);
        org.junit.jupiter.api.Assertions.assertTrue(placed[1] > 0, () -> java.util.Arrays.toString(placed));
    }
}
