package dev.arrayd.scheduler;

import static dev.arrayd.scheduler.SchedulerFixture.I64;
import static dev.arrayd.scheduler.SchedulerFixture.arg;
import static dev.arrayd.scheduler.SchedulerFixture.sc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Buffers that live in host memory the client provides: the first device that can use host memory in
 * place (null:0 here, as the CPU device in the daemon) reads and writes it directly, the other device
 * copies from and to it, a host-written command makes the client's bytes current, and the memory is
 * given back after the buffer and its last users.
 */
class HostMemoryTest extends TwoDevicesSession {

    private final Arena arena = Arena.ofShared();
    private final AtomicInteger released = new AtomicInteger();

    @Override
    String sessionName() {
        return "host-memory";
    }

    @AfterEach
    void closeArena() {
        arena.close();
    }

    private MemorySegment memory(long... values) {
        MemorySegment m = arena.allocate(values.length * 8L, 64);
        for (int i = 0; i < values.length; i++) {
            m.setAtIndex(I64, i, values[i]);
        }
        return m;
    }

    private Buffer inHost(MemorySegment m) {
        return sch.createBuffer(s, DType.I64, new long[] {m.byteSize() / 8}, "null:1", "", MemoryMode.HOSTED_CHANGED_ON_DEVICES,
                new HostMemory(m, released::incrementAndGet));
    }

    private static long[] values(MemorySegment m) {
        return m.toArray(I64);
    }

    private Event run(CommandSpec.Op op) throws Exception {
        Event e = sch.submit(s, List.of(new CommandSpec(nextEvent++, null, 0, op)), null).getFirst().toFuture()
                .get(10, TimeUnit.SECONDS);
        assertEquals(EventState.SUCCEEDED, e.state(), () -> String.valueOf(e.failure()));
        return e;
    }

    private static void allSucceed(List<Event> events) throws Exception {
        for (Event e : events) {
            assertEquals(EventState.SUCCEEDED, e.toFuture().get(10, TimeUnit.SECONDS).state(), () -> e + ": " + e.failure());
        }
    }

    private CommandSpec.LaunchOp launch(String kernel, String device, CommandSpec.Arg... args) {
        return new CommandSpec.LaunchOp(k.get(kernel).handle(), new long[] {4}, null, List.of(args), device);
    }

    @Test
    void theUnifiedDeviceComputesInTheClientsMemoryWithoutCopies() throws Exception {
        MemorySegment m = memory(1, 2, 3, 4);
        Buffer b = inHost(m);
        assertEquals(Map.of("null:0", ReplicaState.SHARED, "host", ReplicaState.SHARED), sch.replicaStates(b),
                "its bytes are its first contents, current on the host and, in place, on null:0");
        run(launch("set", "null:0", arg(b), sc(2)));
        assertArrayEquals(new long[] {1, 3, 5, 7}, values(m), "the launch wrote the client's memory itself");
        assertEquals(Map.of("null:0", ReplicaState.SHARED, "host", ReplicaState.SHARED), sch.replicaStates(b));
        assertArrayEquals(new long[] {1, 3, 5, 7}, f.readI64(s, b, 0, nextEvent++), "a download reads it where it is");
        assertEquals(0, f.devices.get(0).allocatedBytes(), "no slab memory on null:0 for it");
    }

    @Test
    void hostWrittenMakesTheClientsBytesCurrentAndOtherReplicasStale() throws Exception {
        MemorySegment m = memory(1, 2, 3, 4);
        Buffer b = inHost(m);
        Buffer c = sch.createBuffer(s, DType.I64, new long[] {4}, "null:1", "");
        run(launch("mix", "null:1", arg(b), arg(c), sc(0)));
        assertArrayEquals(new long[] {1, 2, 3, 4}, f.readI64(s, c, 0, nextEvent++), "c = 0 * 3 + b");
        assertEquals(ReplicaState.SHARED, sch.replicaStates(b).get("null:1"), "copied to null:1 from the host memory");
        m.copyFrom(memory(10, 20, 30, 40));
        run(new CommandSpec.HostWrittenOp(b.handle()));
        assertEquals(Map.of("null:0", ReplicaState.SHARED, "null:1", ReplicaState.INVALID, "host", ReplicaState.SHARED),
                sch.replicaStates(b));
        run(launch("mix", "null:1", arg(b), arg(c), sc(0)));
        assertArrayEquals(new long[] {13, 26, 39, 52}, f.readI64(s, c, 0, nextEvent++), "null:1 saw the new bytes");
    }

    @Test
    void aPartWriteInPlaceAfterAFailedWriterElsewhereDoesNotRunOverStaleBytes() throws Exception {
        MemorySegment m = memory(1, 2, 3, 4);
        Buffer b = inHost(m);
        run(launch("set", "null:1", arg(b), sc(10))); // b's data on null:1 only: the client's memory is stale
        long onZero = sch.createStream(s, "null:0").handle();
        List<Event> ev = sch.submit(s, List.of(
                new CommandSpec(nextEvent++, null, 0, launch("boom", "null:1", arg(b))),
                // writes b in place on null:0: it keeps the rest, which the transfer from null:1 was to bring
                new CommandSpec(nextEvent++, null, onZero, new CommandSpec.FillOp(b.handle(), KernelArg.Scalar.i64(7), 1, 1)),
                new CommandSpec(nextEvent++, null, 0, new CommandSpec.DownloadOp(b.handle(), 0, 0, Long.MAX_VALUE))),
                null);
        for (Event e : ev) {
            assertEquals(EventState.FAILED, e.toFuture().get(10, TimeUnit.SECONDS).state(), () -> e + " " + e.result());
        }
        assertArrayEquals(new long[] {1, 2, 3, 4}, values(m), "the fill did not run over the stale bytes");
    }

    @Test
    void afterAFailedWriterElsewhereTheClientsWriteOfItsMemoryMakesItGoodForPartWrites() throws Exception {
        MemorySegment m = memory(1, 2, 3, 4);
        Buffer b = inHost(m);
        List<Event> failed = sch.submit(s, List.of(
                new CommandSpec(nextEvent++, null, 0, launch("boom", "null:1", arg(b))),
                // a part write in place on null:0: the transfer from null:1 that was to bring the data failed
                new CommandSpec(nextEvent++, null, 0, launch("acc", "null:0", arg(b), arg(b)))), null);
        for (Event e : failed) {
            assertEquals(EventState.FAILED, e.toFuture().get(10, TimeUnit.SECONDS).state());
        }
        // the client writes its memory and says so: its bytes are b's data again, on null:0 in place too
        m.copyFrom(memory(10, 20, 30, 40));
        run(new CommandSpec.HostWrittenOp(b.handle()));
        run(launch("acc", "null:0", arg(b), arg(b)));
        assertArrayEquals(new long[] {20, 40, 60, 80}, values(m));
        run(launch("acc", "null:1", arg(b), arg(b)));
        assertArrayEquals(new long[] {40, 80, 120, 160}, f.readI64(s, b, 0, nextEvent++));
    }

    @Test
    void aWriteOnAnotherDeviceReachesTheHostMemoryWhenItIsReadThere() throws Exception {
        MemorySegment m = memory(0, 0, 0, 0);
        Buffer b = inHost(m);
        run(launch("set", "null:1", arg(b), sc(10)));
        assertEquals(Map.of("null:0", ReplicaState.INVALID, "null:1", ReplicaState.MODIFIED, "host", ReplicaState.INVALID),
                sch.replicaStates(b));
        assertArrayEquals(new long[] {0, 0, 0, 0}, values(m), "not yet: the newest data is on null:1");
        Buffer c = sch.createBuffer(s, DType.I64, new long[] {4}, "null:0", "");
        run(launch("mix", "null:0", arg(b), arg(c), sc(0)));
        assertArrayEquals(new long[] {1, 11, 21, 31}, values(m), "read on null:0: copied into the host memory it uses");
        assertEquals(Map.of("null:0", ReplicaState.SHARED, "null:1", ReplicaState.SHARED, "host", ReplicaState.SHARED),
                sch.replicaStates(b));
        assertArrayEquals(new long[] {1, 11, 21, 31}, f.readI64(s, c, 0, nextEvent++));
    }

    @Test
    void aDownloadIntoTheBytesTheBufferLivesInWaitsForTheirReaders() throws Exception {
        MemorySegment m = memory(0, 0, 0, 0);
        Buffer b = inHost(m);
        Buffer c = sch.createBuffer(s, DType.I64, new long[] {4}, "null:0", "");
        run(launch("set", "null:1", arg(b), sc(10)));
        run(launch("mix", "null:0", arg(b), arg(c), sc(0))); // b current on null:1 and, in place, on null:0
        long onNull1 = sch.createStream(s, "null:1").handle();
        f.devices.get(0).hold();
        List<Event> events = sch.submit(s, List.of(
                new CommandSpec(nextEvent++, null, 0, launch("mix", "null:0", arg(b), arg(c), sc(0))),
                new CommandSpec(nextEvent++, null, onNull1, new CommandSpec.FillOp(b.handle(), KernelArg.Scalar.i64(99), 0, 0)),
                new CommandSpec(nextEvent++, null, onNull1, new CommandSpec.DownloadOp(b.handle(), 0, 0, m.byteSize(), m))),
                null);
        Event fill = events.get(1).toFuture().get(10, TimeUnit.SECONDS);
        assertEquals(EventState.SUCCEEDED, fill.state(), "null:1 wrote its own replica while null:0 is held");
        assertThrows(TimeoutException.class, () -> events.get(2).toFuture().get(300, TimeUnit.MILLISECONDS),
                "the download into the memory the held launch reads waits for it");
        assertArrayEquals(new long[] {1, 11, 21, 31}, values(m), "the memory the held launch reads is untouched");
        f.devices.get(0).open();
        allSucceed(events);
        assertArrayEquals(new long[] {4, 44, 84, 124}, f.readI64(s, c, 0, nextEvent++), "c = 3 * c + b, of b before the fill");
        assertArrayEquals(new long[] {99, 99, 99, 99}, values(m));
        assertEquals(Map.of("null:0", ReplicaState.SHARED, "null:1", ReplicaState.SHARED, "host", ReplicaState.SHARED),
                sch.replicaStates(b), "the whole buffer downloaded into its memory: current there, and in place on null:0");
    }

    @Test
    void aDownloadIntoTheBytesTheBufferLivesInThatWaitsOnAFailedEventLeavesTheBufferReadable() throws Exception {
        MemorySegment m = memory(0, 0, 0, 0);
        Buffer b = inHost(m);
        Buffer other = sch.createBuffer(s, DType.I64, new long[] {4}, "null:0", "");
        run(launch("set", "null:1", arg(b), sc(10))); // the newest data on null:1: the download moves it
        long failed = nextEvent++;
        List<Event> events = sch.submit(s, List.of(
                new CommandSpec(failed, null, 0, launch("boom", "null:0", arg(other))),
                new CommandSpec(nextEvent++, new long[] {failed}, 0,
                        new CommandSpec.DownloadOp(b.handle(), 0, 0, m.byteSize(), m))), null);
        Event download = events.get(1).toFuture().get(10, TimeUnit.SECONDS);
        assertEquals(EventState.FAILED, download.state(), "it waited on a failed event");
        assertTrue(download.failure().getMessage().startsWith("waited on event " + failed), download.failure()::getMessage);
        // the buffer's data is as good as before: in its memory, on null:0 in place, and on null:1
        assertArrayEquals(new long[] {1, 11, 21, 31}, f.readI64(s, b, 0, nextEvent++));
        Buffer c = sch.createBuffer(s, DType.I64, new long[] {4}, "null:0", "");
        run(launch("mix", "null:0", arg(b), arg(c), sc(0)));
        assertArrayEquals(new long[] {1, 11, 21, 31}, f.readI64(s, c, 0, nextEvent++), "c = 0 * 3 + b, in place");
    }

    @Test
    void aDownloadIntoTheBytesTheBufferLivesInRunsOnTheDeviceThatUsesThemInPlace() throws Exception {
        MemorySegment m = memory(0, 0, 0, 0);
        Buffer b = inHost(m);
        run(launch("set", "null:1", arg(b), sc(10)));
        assertEquals(Map.of("null:0", ReplicaState.INVALID, "null:1", ReplicaState.MODIFIED, "host", ReplicaState.INVALID),
                sch.replicaStates(b));
        run(new CommandSpec.DownloadOp(b.handle(), 0, 0, m.byteSize(), m));
        assertArrayEquals(new long[] {1, 11, 21, 31}, values(m));
        assertEquals(Map.of("null:0", ReplicaState.SHARED, "null:1", ReplicaState.SHARED, "host", ReplicaState.SHARED),
                sch.replicaStates(b), "a transfer into the memory null:0 uses in place: current there too");
        MemorySegment other = arena.allocate(32, 64);
        run(new CommandSpec.DownloadOp(b.handle(), 8, 16, other.byteSize(), other));
        assertArrayEquals(new long[] {11, 21, 0, 0}, values(other), "into other bytes: an ordinary download");
    }

    @Test
    void aDownloadIntoTheBytesItReadsInPlaceStillWaitsForEveryEarlierUserOfThem() throws Exception {
        MemorySegment m = memory(1, 2, 3, 4);
        Buffer b = inHost(m);
        Buffer c = sch.createBuffer(s, DType.I64, new long[] {4}, "null:1", "");
        f.devices.get(1).hold();
        List<Event> events = sch.submit(s, List.of(
                new CommandSpec(nextEvent++, null, 0, launch("mix", "null:1", arg(b), arg(c), sc(0))),
                new CommandSpec(nextEvent++, null, 0, new CommandSpec.DownloadOp(b.handle(), 0, 0, m.byteSize(), m))),
                null);
        assertThrows(TimeoutException.class, () -> events.get(1).toFuture().get(300, TimeUnit.MILLISECONDS),
                "nothing moves (null:0 reads the memory in place), yet it waits for the held copy out of that memory: "
                        + "once it is done, the client may write the memory");
        f.devices.get(1).open();
        allSucceed(events);
        assertArrayEquals(new long[] {1, 2, 3, 4}, f.readI64(s, c, 0, nextEvent++));
    }

    @Test
    void anUploadFromTheBytesTheBufferLivesInWaitsForTheirWriter() throws Exception {
        MemorySegment m = memory(0, 0, 0, 0);
        Buffer b = inHost(m);
        long onNull1 = sch.createStream(s, "null:1").handle();
        f.devices.get(0).hold();
        List<Event> events = sch.submit(s, List.of(
                new CommandSpec(nextEvent++, null, 0, launch("set", "null:0", arg(b), sc(10))),
                new CommandSpec(nextEvent++, null, onNull1, new CommandSpec.UploadOp(b.handle(), 0, m))), null);
        assertThrows(TimeoutException.class, () -> events.get(1).toFuture().get(300, TimeUnit.MILLISECONDS),
                "the upload reads the memory the held launch writes: it waits for it");
        f.devices.get(0).open();
        allSucceed(events);
        assertEquals(ReplicaState.MODIFIED, sch.replicaStates(b).get("null:1"), "the upload wrote null:1's replica");
        assertArrayEquals(new long[] {1, 11, 21, 31}, f.readI64(s, b, 0, nextEvent++), "the bytes the launch wrote");
        run(new CommandSpec.UploadOp(b.handle(), 0, m));
        assertEquals(Map.of("null:0", ReplicaState.SHARED, "null:1", ReplicaState.INVALID, "host", ReplicaState.SHARED),
                sch.replicaStates(b), "from its own bytes, on no stream: on null:0, which uses them in place");
    }

    @Test
    void theMemoryIsGivenBackAfterTheBufferIsDestroyed() throws Exception {
        MemorySegment m = memory(5, 6, 7, 8);
        Buffer b = inHost(m);
        run(launch("set", "null:0", arg(b), sc(1)));
        assertTrue(f.devices.get(0).device.hasPool(-1), "mapped on null:0 as pool -1");
        assertEquals(0, released.get());
        sch.destroyBuffer(s, b.handle());
        assertEquals(1, released.get(), "released once nothing uses it");
        assertFalse(f.devices.get(0).device.hasPool(-1), "unmapped from null:0");
        assertArrayEquals(new long[] {1, 2, 3, 4}, values(m), "the client's memory keeps what was computed");
    }

    @Test
    void badRequestsAreRefusedNamingTheValue() {
        MemorySegment m = memory(1, 2, 3, 4);
        ArraydException mode = assertThrows(ArraydException.class, () -> sch.createBuffer(s, DType.I64, new long[] {4},
                "", "", MemoryMode.DEVICE, new HostMemory(m, released::incrementAndGet)));
        assertEquals(ErrorCode.INVALID_ARGUMENT, mode.code());
        assertTrue(mode.getMessage().startsWith("memory_mode: DEVICE (expected: HOSTED_CONSTANT"), mode.getMessage());
        ArraydException size = assertThrows(ArraydException.class, () -> sch.createBuffer(s, DType.I64, new long[] {3},
                "", "", MemoryMode.HOSTED_VOLATILE, new HostMemory(m, released::incrementAndGet)));
        assertEquals("host memory: 32 bytes (expected: 24, the size of i64[3])", size.getMessage());
        Buffer plain = sch.createBuffer(s, DType.I64, new long[] {4}, "", "");
        ArraydException notHosted = assertThrows(ArraydException.class,
                () -> sch.submit(s, List.of(new CommandSpec(nextEvent++, null, 0, new CommandSpec.HostWrittenOp(plain.handle()))),
                        null));
        assertEquals(ErrorCode.FAILED_PRECONDITION, notHosted.code());
        assertTrue(notHosted.getMessage().startsWith("commands[0]: host_written.buffer: buffer "), notHosted.getMessage());
        assertEquals(0, released.get(), "nothing was made of the refused memory");
    }
}
