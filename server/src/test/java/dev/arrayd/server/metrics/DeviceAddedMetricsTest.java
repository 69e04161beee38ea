package dev.arrayd.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.cpu.CpuBackend;
import dev.arrayd.devices.cpu.CpuOptions;
import dev.arrayd.scheduler.Buffer;
import dev.arrayd.scheduler.CommandSpec;
import dev.arrayd.scheduler.EventState;
import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.scheduler.SchedulerConfig;
import dev.arrayd.scheduler.Session;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A device that joins after the start gets its command meters and gauges before any command runs on it. */
class DeviceAddedMetricsTest {

    @Test
    void aDeviceAddedLaterIsTimedAndGauged() throws Exception {
        try (CpuBackend cpu = new CpuBackend(CpuOptions.defaults().withDeviceMemoryBytes(64L << 20))) {
            List<Device> opened = cpu.openDevices(2);
            ArraydMetrics metrics = new ArraydMetrics(List.of("cpu:0"), 8, 0, "test");
            Scheduler sch = new Scheduler(SchedulerConfig.defaults(), List.of(opened.get(0)), Map.of("cpu", cpu.compiler()),
                    System::nanoTime, metrics);
            try {
                metrics.bindScheduler(sch);
                var registry = metrics.registry();
                assertTrue(registry.find("arrayd.device.memory.budget").tag("device", "cpu:1").gauges().isEmpty());

                assertEquals(1, sch.addDevices(List.of(opened.get(1))).getFirst().index());
                assertEquals(64L << 20, registry.get("arrayd.device.memory.capacity").tag("device", "cpu:1").gauge().value());

                Session s = sch.openSession("metrics", 60_000);
                Buffer b = sch.createBuffer(s, DType.F32, new long[] {16}, "cpu:1", "b");
                var done = sch.submit(s, List.of(new CommandSpec(0, null, 0,
                        new CommandSpec.FillOp(b.handle(), KernelArg.Scalar.f32(2f), 0, 0, false))), null)
                        .getFirst().toFuture().get(30, TimeUnit.SECONDS);
                assertEquals(EventState.SUCCEEDED, done.state(), () -> String.valueOf(done.failure()));
                assertTrue(registry.get("arrayd.queue.wait").tag("device", "cpu:1").timer().count() >= 1,
                        "the fill on the added device was timed");
                assertEquals(0, registry.get("arrayd.queue.wait").tag("device", "cpu:0").timer().count());
                sch.closeSession(s);
            } finally {
                sch.close();
                metrics.close();
            }
        }
    }
}
