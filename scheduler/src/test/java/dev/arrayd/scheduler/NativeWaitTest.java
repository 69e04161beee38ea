package dev.arrayd.scheduler;

import static dev.arrayd.scheduler.SchedulerFixture.arg;
import static dev.arrayd.scheduler.SchedulerFixture.sc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Dependencies on commands already on a lane are waited for by the device (markers), not the host:
 * the dependent is handed to its lane at once, and still fails when a data dependency failed.
 */
class NativeWaitTest extends TwoDevicesSession {

    @Override
    String sessionName() {
        return "native";
    }

    private Buffer buf(String device) {
        return sch.createBuffer(s, DType.I64, new long[] {4}, device, "", MemoryMode.DEVICE);
    }

    private Event submit(String kernel, String device, CommandSpec.Arg... args) {
        return sch.submit(s, List.of(new CommandSpec(nextEvent++, null, 0, new CommandSpec.LaunchOp(k.get(kernel).handle(),
                new long[] {4}, null, List.of(args), device))), null).getFirst();
    }

    @Test
    void aCommandReadingWhatALaneIsStillComputingIsHandedToItsLaneAtOnce() throws Exception {
        Buffer a = buf("null:0");
        Buffer b = buf("null:0");
        f.devices.forEach(TestDevice::hold); // the writer stays on its lane, unfinished
        Event write = submit("set", "null:0", arg(a), sc(2));
        Event read = submit("mix", "null:0", arg(a), arg(b), sc(1));
        int waits = f.devices.get(0).nativeWaits();
        assertTrue(waits >= 1, "the dependent went to its lane behind a marker: " + waits);
        assertTrue(!write.isDone() && !read.isDone());
        f.devices.forEach(TestDevice::open);
        assertEquals(EventState.SUCCEEDED, read.toFuture().get(10, TimeUnit.SECONDS).state());
        assertArrayEquals(new long[] {2, 4, 6, 8}, f.readI64(s, b, 0, nextEvent++)); // b = 0 * 3 + a + 1, a = 2i + 1
    }

    @Test
    void aNativelyOrderedDependentOfAFailedCommandFailsWithItsCause() throws Exception {
        Buffer a = buf("null:0");
        Buffer b = buf("null:0");
        f.devices.forEach(TestDevice::hold);
        Event boom = submit("boom", "null:0", arg(a));
        Event dependent = submit("mix", "null:0", arg(a), arg(b), sc(1));
        assertTrue(f.devices.get(0).nativeWaits() >= 1);
        f.devices.forEach(TestDevice::open);
        Event d = dependent.toFuture().get(10, TimeUnit.SECONDS);
        assertEquals(EventState.FAILED, d.state());
        assertEquals(ErrorCode.OUT_OF_RANGE, d.failure().code(), d.failure()::toString);
        assertTrue(d.failure() instanceof DependencyFailedException, d.failure()::toString);
        assertEquals(EventState.FAILED, boom.toFuture().get(10, TimeUnit.SECONDS).state());
    }

    @Test
    void aNativelyOrderedDependentThatFailsItselfTooFailsWithTheRootCause() throws Exception {
        f.devices.forEach(TestDevice::hold);
        Event first = submit("boom", "null:0", arg(buf("null:0")));
        // waits on the first (data) and fails by itself on its device as well: the first failure is the root
        Event dependent = sch.submit(s, List.of(new CommandSpec(nextEvent++, new long[] {first.id()}, 0,
                new CommandSpec.LaunchOp(k.get("boom").handle(), new long[] {4}, null, List.of(arg(buf("null:0"))),
                        "null:0"))), null).getFirst();
        assertTrue(f.devices.get(0).nativeWaits() >= 1, "the dependent waits on the device");
        f.devices.forEach(TestDevice::open);
        ArraydException failure = dependent.toFuture().get(10, TimeUnit.SECONDS).failure();
        assertTrue(failure instanceof DependencyFailedException, failure::toString);
        assertTrue(failure.getMessage().startsWith("waited on event " + first.id() + ","), failure::getMessage);
    }
}
