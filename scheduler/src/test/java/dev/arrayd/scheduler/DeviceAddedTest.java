package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A device that joins after the start (a peer daemon that came up): it takes the next index, buffers made before
 * it get replicas there, kernels compiled before it run there, and it takes part in placement.
 */
class DeviceAddedTest {

    private static final long[] DATA = {5, -6, 7, -8};

    @Test
    void aDeviceAddedLaterServesBuffersAndKernelsMadeBeforeIt() throws Exception {
        try (SchedulerFixture f = SchedulerFixture.withLate(3, 2, 0)) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("late", 60_000);
            Map<String, CompiledKernel> k = f.compileAll(s);
            Buffer a = sch.createBuffer(s, DType.I64, new long[] {4}, "null:0", "a", MemoryMode.DEVICE);
            Buffer b = sch.createBuffer(s, DType.I64, new long[] {4}, "null:1", "b", MemoryMode.DEVICE);
            MultiDeviceProperties.await(sch.submit(s, List.of(
                    new CommandSpec(0, null, 0, new CommandSpec.UploadOp(a.handle(), 0, MemorySegment.ofArray(DATA.clone()))),
                    new CommandSpec(0, null, 0, new CommandSpec.UploadOp(b.handle(), 0, MemorySegment.ofArray(new long[4])))),
                    null));
            assertThrows(ArraydException.class, () -> sch.device("null:2"), "not there before it is added");

            List<DeviceRuntime> added = f.addLate();
            assertEquals(1, added.size());
            assertEquals(2, added.getFirst().index());
            assertEquals(List.of("null:0", "null:1", "null:2"), sch.devices().stream().map(d -> d.id().toString()).toList());
            assertEquals(added.getFirst(), sch.device("null:2"));

            // b = 3b + a + 1 on the new device, with a kernel compiled before it: both buffers move there
            MultiDeviceProperties.await(sch.submit(s, List.of(new CommandSpec(0, null, 0, new CommandSpec.LaunchOp(
                    k.get("mix").handle(), new long[] {4}, null,
                    List.of(SchedulerFixture.arg(a), SchedulerFixture.arg(b), SchedulerFixture.sc(1)), "null:2"))), null));
            assertEquals(ReplicaState.MODIFIED, sch.replicaStates(b).get("null:2"));
            assertArrayEquals(new long[] {6, -5, 8, -7}, f.readI64(s, b, 0, 0));
            assertArrayEquals(DATA, f.readI64(s, a, sch.createStream(s, "null:2").handle(), 0), "a replica there serves reads");

            // a buffer made on it, and a stream's work there
            Buffer c = sch.createBuffer(s, DType.I64, new long[] {4}, "null:2", "c", MemoryMode.DEVICE);
            MultiDeviceProperties.await(sch.submit(s, List.of(new CommandSpec(0, null, 0, new CommandSpec.LaunchOp(
                    k.get("set").handle(), new long[] {4}, null, List.of(SchedulerFixture.arg(c), SchedulerFixture.sc(2)),
                    "null:2"))), null));
            assertArrayEquals(new long[] {1, 3, 5, 7}, f.readI64(s, c, 0, 0));
            assertEquals(Map.of("null:2", ReplicaState.MODIFIED), sch.replicaStates(c), "written there, only there");
            sch.closeSession(s);

            assertThrows(IllegalArgumentException.class, () -> sch.addDevices(List.of(f.devices.getFirst().device)),
                    "an id present already");
        }
    }

    @Test
    void theDeadlineTimerWatchesADeviceAddedLater() throws Exception {
        try (SchedulerFixture f = SchedulerFixture.withLate(2, 1, 1)) {
            Scheduler sch = f.scheduler;
            f.addLate();
            TestDevice late = f.devices.get(1);
            Session s = sch.openSession("late-deadline", 60_000);
            Buffer busy = sch.createBuffer(s, DType.I64, new long[] {4}, "null:1", "busy");
            Buffer other = sch.createBuffer(s, DType.I64, new long[] {4}, "null:1", "other");
            long busyStream = sch.createStream(s, "null:1").handle();
            MultiDeviceProperties.await(List.of(sch.stream(s, 0, "null:1").allWork()));
            late.hold();
            Event running = sch.submit(s, List.of(new CommandSpec(0, null, busyStream, new CommandSpec.FillOp(busy.handle(),
                    KernelArg.Scalar.i64(1), 0, 0))), null).getFirst();
            // queued behind it (one dispatch slot), with a deadline: the timer, not a dispatch, must drop it
            Event expiring = sch.submit(s, List.of(new CommandSpec(0, null, 0, new CommandSpec.FillOp(other.handle(),
                    KernelArg.Scalar.i64(2), 0, 0), System.nanoTime() + 50_000_000L, null)), null).getFirst();
            assertEquals(1, sch.device("null:1").queuedCommands(), "queued behind the held one");
            Event failed = expiring.toFuture().get(30, TimeUnit.SECONDS);
            assertEquals(ErrorCode.DEADLINE_EXCEEDED, failed.failure().code(), "dropped while the device still held");
            late.open();
            assertEquals(EventState.SUCCEEDED, running.toFuture().get(30, TimeUnit.SECONDS).state());
            sch.closeSession(s);
        }
    }

    @Test
    void aSchedulerWithoutDevicesRefusesWithUnavailableUntilOneJoins() throws Exception {
        try (SchedulerFixture f = SchedulerFixture.withLate(1, 0, 0)) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("empty", 60_000);
            Map<String, CompiledKernel> k = f.compileAll(s);
            ArraydException none = assertThrows(ArraydException.class,
                    () -> sch.createBuffer(s, DType.I64, new long[] {4}, "", "b"));
            assertEquals(ErrorCode.UNAVAILABLE, none.code(), none.getMessage());
            assertTrue(none.getMessage().contains("no device yet"), none.getMessage());
            assertEquals(List.of(), sch.devices());

            f.addLate();
            Buffer b = sch.createBuffer(s, DType.I64, new long[] {4}, "", "b");
            MultiDeviceProperties.await(sch.submit(s, List.of(new CommandSpec(0, null, 0, new CommandSpec.LaunchOp(
                    k.get("set").handle(), new long[] {4}, null, List.of(SchedulerFixture.arg(b), SchedulerFixture.sc(3)),
                    ""))), null));
            assertArrayEquals(new long[] {1, 4, 7, 10}, f.readI64(s, b, 0, 0), "on the device that joined, the default now");
            sch.closeSession(s);
        }
    }
}
