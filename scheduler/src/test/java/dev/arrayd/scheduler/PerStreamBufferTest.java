package dev.arrayd.scheduler;

import static dev.arrayd.scheduler.SchedulerFixture.arg;
import static dev.arrayd.scheduler.SchedulerFixture.sc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * PER_STREAM buffers (OCANNL's per-stream sharing): each stream its own instance. Instances are freed
 * with the session: the fixture's tear-down finds no slab bytes left allocated.
 */
class PerStreamBufferTest extends TwoDevicesSession {

    @Override
    String sessionName() {
        return "per-stream";
    }

    private Buffer perStream() {
        return sch.createBuffer(s, DType.I64, new long[] {4}, "null:0", "grad", MemoryMode.DEVICE, Sharing.PER_STREAM);
    }

    private CommandSpec launch(long stream, String kernel, CommandSpec.Arg... args) {
        return new CommandSpec(nextEvent++, null, stream, new CommandSpec.LaunchOp(k.get(kernel).handle(), new long[] {4},
                null, List.of(args), ""));
    }

    private Event run(CommandSpec c) throws Exception {
        Event e = sch.submit(s, List.of(c), null).getFirst().toFuture().get(10, TimeUnit.SECONDS);
        if (e.isFailed()) {
            throw e.failure();
        }
        return e;
    }

    @Test
    void eachStreamReadsAndWritesItsOwnZeroedInstance() throws Exception {
        Buffer g = perStream();
        long a = sch.createStream(s, "null:0").handle();
        long b = sch.createStream(s, "null:1").handle();
        long c = sch.createStream(s, "null:0").handle();
        assertEquals(Sharing.PER_STREAM, g.sharing());
        assertEquals(0, f.devices.get(0).allocatedBytes(), "no memory until a stream uses it");
        run(launch(a, "set", arg(g), sc(2)));
        run(launch(b, "set", arg(g), sc(5)));
        run(launch(a, "mix", arg(g), arg(g), sc(1))); // a's instance only: b = b*3 + a + 1
        assertArrayEquals(new long[] {5, 13, 21, 29}, f.readI64(s, g, a, nextEvent++));
        assertArrayEquals(new long[] {1, 6, 11, 16}, f.readI64(s, g, b, nextEvent++));
        assertArrayEquals(new long[] {0, 0, 0, 0}, f.readI64(s, g, c, nextEvent++), "a stream's first use sees zeros");
        assertTrue(sch.replicaStates(g).isEmpty(), "the handle itself holds no replica");
    }

    @Test
    void aCopyReadsAnotherStreamsInstanceAfterItsWrites() throws Exception {
        Buffer g = perStream();
        Buffer sum = sch.createBuffer(s, DType.I64, new long[] {4}, "null:1", "sum", MemoryMode.DEVICE);
        long a = sch.createStream(s, "null:0").handle();
        long b = sch.createStream(s, "null:1").handle();
        // a's write and b's copy of a's instance go in one batch: the copy waits for the write by hazard
        List<Event> events = sch.submit(s, List.of(
                launch(a, "set", arg(g), sc(3)),
                new CommandSpec(nextEvent++, null, b, new CommandSpec.CopyOp(g.handle(), sum.handle(), 0, 0, 0, "",
                        MergeMode.NONE, a))), null);
        for (Event e : events) {
            assertTrue(!e.toFuture().get(10, TimeUnit.SECONDS).isFailed(), () -> String.valueOf(e.failure()));
        }
        assertArrayEquals(new long[] {1, 4, 7, 10}, f.readI64(s, sum, b, nextEvent++));
        assertArrayEquals(new long[] {0, 0, 0, 0}, f.readI64(s, g, b, nextEvent++), "b's own instance is untouched");
    }

    @Test
    void anInstanceIsFreedWithItsStreamAndTheRestWithTheBuffer() throws Exception {
        Buffer g = perStream();
        long a = sch.createStream(s, "null:0").handle();
        long c = sch.createStream(s, "null:0").handle();
        run(launch(a, "set", arg(g), sc(1)));
        long one = f.devices.get(0).allocatedBytes();
        run(launch(c, "set", arg(g), sc(1)));
        assertTrue(one > 0);
        sch.destroyStream(s, a);
        run(launch(c, "set", arg(g), sc(2))); // still there for c
        assertArrayEquals(new long[] {1, 3, 5, 7}, f.readI64(s, g, c, nextEvent++));
        sch.destroyBuffer(s, g.handle());
        ArraydException gone = assertThrows(ArraydException.class, () -> run(launch(c, "set", arg(g), sc(2))));
        assertEquals(ErrorCode.NOT_FOUND, gone.code(), gone::toString);
    }

    @Test
    void instancesAreChargedToTheSessionsQuotaAndGivenBack() throws Exception {
        AtomicLong used = new AtomicLong();
        long limit = 40; // one instance of 32 bytes fits, two do not
        s.setMemoryCharge(new MemoryCharge() {
            @Override
            public void reserve(long bytes) {
                if (used.addAndGet(bytes) > limit) {
                    used.addAndGet(-bytes);
                    throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, "device memory quota " + limit + " bytes exceeded");
                }
            }

            @Override
            public void release(long bytes) {
                used.addAndGet(-bytes);
            }
        });
        Buffer g = perStream();
        long a = sch.createStream(s, "null:0").handle();
        long b = sch.createStream(s, "null:0").handle();
        run(launch(a, "set", arg(g), sc(1)));
        assertEquals(32, used.get());
        ArraydException over = assertThrows(ArraydException.class, () -> run(launch(b, "set", arg(g), sc(1))));
        assertEquals(ErrorCode.RESOURCE_EXHAUSTED, over.code(), over::toString);
        assertTrue(over.getMessage().contains("quota 40 bytes"), over.getMessage());
        sch.destroyStream(s, a);
        assertEquals(0, used.get(), "the instance's bytes come back with its stream");
        run(launch(b, "set", arg(g), sc(1)));
        assertEquals(32, used.get());
    }

    @Test
    void onlyDeviceBuffersArePerStreamAndOnlyTheyTakeASourceStream() {
        ArraydException hosted = assertThrows(ArraydException.class, () -> sch.createBuffer(s, DType.I64, new long[] {4},
                "null:0", "", MemoryMode.HOSTED_CONSTANT, Sharing.PER_STREAM));
        assertEquals(ErrorCode.INVALID_ARGUMENT, hosted.code());
        assertTrue(hosted.getMessage().startsWith("sharing: PER_STREAM with memory mode HOSTED_CONSTANT"), hosted.getMessage());
        Buffer plain = sch.createBuffer(s, DType.I64, new long[] {4}, "null:0", "", MemoryMode.DEVICE);
        long a = sch.createStream(s, "null:0").handle();
        ArraydException notPerStream = assertThrows(ArraydException.class, () -> sch.submit(s, List.of(new CommandSpec(
                nextEvent++, null, a, new CommandSpec.CopyOp(plain.handle(), plain.handle(), 0, 0, 0, "", MergeMode.NONE, a))),
                null));
        assertEquals(ErrorCode.INVALID_ARGUMENT, notPerStream.code());
        assertTrue(notPerStream.getMessage().contains("copy.src_stream"), notPerStream.getMessage());
    }
}
