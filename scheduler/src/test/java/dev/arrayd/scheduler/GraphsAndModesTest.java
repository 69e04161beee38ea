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
import dev.arrayd.devices.api.KernelArg;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Recorded graphs, merge buffers, memory modes and replica states, one example each. */
class GraphsAndModesTest extends TwoDevicesSession {

    @Override
    String sessionName() {
        return "graphs";
    }

    private Buffer buf(String device, MemoryMode mode) {
        return sch.createBuffer(s, DType.I64, new long[] {4}, device, "", mode);
    }

    private CommandSpec launch(long event, long[] waits, long stream, String kernel, String device, CommandSpec.Arg... args) {
        return new CommandSpec(event, waits, stream, new CommandSpec.LaunchOp(k.get(kernel).handle(), new long[] {4}, null,
                List.of(args), device));
    }

    private Event run(CommandSpec c) throws Exception {
        Event e = sch.submit(s, List.of(c), null).getFirst().toFuture().get(10, TimeUnit.SECONDS);
        assertEquals(EventState.SUCCEEDED, e.state(), () -> String.valueOf(e.failure()));
        return e;
    }

    @Test
    void aRecordedGraphReplaysWithNewScalarsAndReboundBuffers() throws Exception {
        Buffer a = buf("null:0", MemoryMode.DEVICE);
        Buffer c = buf("null:0", MemoryMode.DEVICE);
        Buffer c2 = buf("null:1", MemoryMode.DEVICE);
        Graph g = sch.recordGraph(s, List.of(
                launch(1, null, 0, "set", "null:0", arg(a), sc(2)),
                launch(2, new long[] {1}, 0, "mix", "null:0", arg(a), arg(c), sc(10))));
        assertEquals(2, g.size());
        List<Event> first = sch.replayGraph(s, g.handle(), new GraphReplay(100, null, null, null, CommandSpec.NO_DEADLINE), null);
        assertEquals(List.of(100L, 101L), first.stream().map(Event::id).toList());
        first.getLast().toFuture().get(10, TimeUnit.SECONDS);
        nextEvent = 200;
        assertArrayEquals(new long[] {11, 13, 15, 17}, f.readI64(s, c, 0, nextEvent++), "c = 0*3 + (2i+1) + 10");
        List<Event> second = sch.replayGraph(s, g.handle(), new GraphReplay(0, null, Map.of(c.handle(), c2.handle()),
                List.of(new GraphReplay.ScalarValue(0, 1, KernelArg.Scalar.i64(1)),
                        new GraphReplay.ScalarValue(1, 2, KernelArg.Scalar.i64(0))), CommandSpec.NO_DEADLINE), null);
        second.getLast().toFuture().get(10, TimeUnit.SECONDS);
        assertEquals(EventState.SUCCEEDED, second.getLast().state(), () -> String.valueOf(second.getLast().failure()));
        assertArrayEquals(new long[] {1, 2, 3, 4}, f.readI64(s, c2, 0, nextEvent++), "rebound to c2 (on null:1: moved there), k = 1, then + 0");
        assertArrayEquals(new long[] {11, 13, 15, 17}, f.readI64(s, c, 0, nextEvent++), "c untouched by the second replay");
        ArraydException bad = assertThrows(ArraydException.class, () -> sch.replayGraph(s, g.handle(),
                new GraphReplay(0, null, null, List.of(new GraphReplay.ScalarValue(1, 2, KernelArg.Scalar.f32(1))),
                        CommandSpec.NO_DEADLINE), null));
        assertEquals("scalars[0]: f32 scalar (expected: i64 for parameter k)", bad.getMessage());
        ArraydException cyc = assertThrows(ArraydException.class, () -> sch.recordGraph(s, List.of(
                launch(1, new long[] {2}, 0, "set", "", arg(a), sc(1)))));
        assertTrue(cyc.getMessage().startsWith("commands[0]: wait_events[0]: event 2 (expected: an earlier command"),
                cyc.getMessage());
        sch.destroyGraph(s, g.handle());
        assertEquals(ErrorCode.NOT_FOUND, assertThrows(ArraydException.class,
                () -> sch.replayGraph(s, g.handle(), new GraphReplay(0, null, null, null, CommandSpec.NO_DEADLINE), null)).code());
    }

    @Test
    void aGradientMergesThroughTheMergeBufferOfAStream() throws Exception {
        Buffer g0 = buf("null:0", MemoryMode.DEVICE);
        Buffer g1 = buf("null:1", MemoryMode.DEVICE);
        run(launch(nextEvent++, null, 0, "set", "null:0", arg(g0), sc(1)));
        run(launch(nextEvent++, null, 0, "set", "null:1", arg(g1), sc(10)));
        Stream st = sch.createStream(s, "null:0");
        List<Event> ev = sch.submit(s, List.of(
                new CommandSpec(nextEvent++, null, st.handle(), new CommandSpec.CopyOp(g1.handle(), 0, 0, 0, 0, "", MergeMode.COPY)),
                launch(nextEvent++, null, st.handle(), "acc", "", new CommandSpec.MergeArg(), arg(g0))), null);
        ev.getLast().toFuture().get(10, TimeUnit.SECONDS);
        assertEquals(EventState.SUCCEEDED, ev.getLast().state(), () -> String.valueOf(ev.getLast().failure()));
        assertArrayEquals(new long[] {1 + 1, 2 + 11, 3 + 21, 4 + 31}, f.readI64(s, g0, 0, nextEvent++));
        assertEquals(Map.of("null:1", ReplicaState.MODIFIED), sch.replicaStates(g1), "COPY leaves no replica of g1 on null:0");
        // streaming on the same device: read in place
        List<Event> ev2 = sch.submit(s, List.of(
                new CommandSpec(nextEvent++, null, st.handle(), new CommandSpec.CopyOp(g0.handle(), 0, 0, 0, 0, "", MergeMode.STREAMING)),
                launch(nextEvent++, null, st.handle(), "acc", "", new CommandSpec.MergeArg(), arg(g0))), null);
        ev2.getLast().toFuture().get(10, TimeUnit.SECONDS);
        assertArrayEquals(new long[] {4, 26, 48, 70}, f.readI64(s, g0, 0, nextEvent++), "g0 += g0");
        // a merge copy submitted alone, then the launch that reads its merge buffer alone
        sch.submit(s, new CommandSpec(nextEvent++, null, st.handle(), new CommandSpec.CopyOp(g1.handle(), 0, 0, 0, 0, "",
                MergeMode.COPY)), null);
        Event alone = sch.submit(s, launch(nextEvent++, null, st.handle(), "acc", "", new CommandSpec.MergeArg(), arg(g0)), null);
        alone.toFuture().get(10, TimeUnit.SECONDS);
        assertEquals(EventState.SUCCEEDED, alone.state(), () -> String.valueOf(alone.failure()));
        assertArrayEquals(new long[] {4 + 1, 26 + 11, 48 + 21, 70 + 31}, f.readI64(s, g0, 0, nextEvent++), "g0 += g1");
        ArraydException empty = assertThrows(ArraydException.class, () -> sch.submit(s, List.of(
                launch(nextEvent++, null, 0, "acc", "null:1", new CommandSpec.MergeArg(), arg(g1))), null));
        assertEquals(ErrorCode.FAILED_PRECONDITION, empty.code());
        sch.destroyStream(s, st.handle());
    }

    /**
     * Regression: a kernel that never ran anywhere has no history to place by, and its launches used to
     * add nothing to any device's queued work, so a burst of them all went to one device.
     */
    @Test
    void aBurstOfLaunchesOfANeverRunKernelIsSpreadOverTheDevices() throws Exception {
        f.devices.forEach(TestDevice::hold); // nothing completes: no history while the burst is placed
        List<Buffer> bufs = new java.util.ArrayList<>();
        List<CommandSpec> burst = new java.util.ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Buffer b = buf("", MemoryMode.DEVICE);
            bufs.add(b);
            burst.add(launch(nextEvent++, null, 0, "set", "", arg(b), sc(i)));
        }
        List<Event> events = sch.submit(s, burst, null);
        f.devices.forEach(TestDevice::open);
        for (Event e : events) {
            assertEquals(EventState.SUCCEEDED, e.toFuture().get(10, TimeUnit.SECONDS).state());
        }
        int[] placed = new int[2];
        for (Buffer b : bufs) {
            Map<String, ReplicaState> states = sch.replicaStates(b);
            for (int d = 0; d < 2; d++) {
                if (states.get("null:" + d) == ReplicaState.MODIFIED) {
                    placed[d]++;
                }
            }
        }
        assertEquals(8, placed[0] + placed[1], () -> java.util.Arrays.toString(placed));
        assertTrue(placed[0] >= 3 && placed[1] >= 3, () -> "launches per device: " + java.util.Arrays.toString(placed));
    }

    @Test
    void readingOnAnotherDeviceLeavesTwoSharedReplicasAndAWriteInvalidatesTheOther() throws Exception {
        Buffer a = buf("null:0", MemoryMode.DEVICE);
        Buffer b = buf("null:1", MemoryMode.DEVICE);
        run(launch(nextEvent++, null, 0, "set", "null:0", arg(a), sc(3)));
        run(launch(nextEvent++, null, 0, "mix", "null:1", arg(a), arg(b), sc(0)));
        assertEquals(Map.of("null:0", ReplicaState.SHARED, "null:1", ReplicaState.SHARED), sch.replicaStates(a));
        run(launch(nextEvent++, null, 0, "set", "null:1", arg(a), sc(5)));
        assertEquals(Map.of("null:0", ReplicaState.INVALID, "null:1", ReplicaState.MODIFIED), sch.replicaStates(a));
        assertArrayEquals(new long[] {1, 6, 11, 16}, f.readI64(s, a, 0, nextEvent++));
        assertArrayEquals(new long[] {1, 4, 7, 10}, f.readI64(s, b, 0, nextEvent++));
    }

    @Test
    void aHostedConstantBufferIsWrittenBeforeItsFirstReadAndKeptOnTheHost() throws Exception {
        Buffer c = buf("null:0", MemoryMode.HOSTED_CONSTANT);
        // written in two parts, like a chunked upload: both are allowed before the first read
        run(new CommandSpec(nextEvent++, null, 0, new CommandSpec.UploadOp(c.handle(), 0, MemorySegment.ofArray(new long[] {7, 8}))));
        run(new CommandSpec(nextEvent++, null, 0, new CommandSpec.UploadOp(c.handle(), 16, MemorySegment.ofArray(new long[] {9, 10}))));
        assertEquals(Map.of("null:0", ReplicaState.SHARED, "host", ReplicaState.SHARED), sch.replicaStates(c));
        Buffer out = buf("null:1", MemoryMode.DEVICE);
        run(launch(nextEvent++, null, 0, "mix", "null:1", arg(c), arg(out), sc(0)));
        assertArrayEquals(new long[] {7, 8, 9, 10}, f.readI64(s, out, 0, nextEvent++), "null:1 got it from the host copy");
        ArraydException again = assertThrows(ArraydException.class, () -> sch.submit(s, List.of(new CommandSpec(nextEvent, null, 0,
                new CommandSpec.FillOp(c.handle(), KernelArg.Scalar.i64(1), 0, 0))), null));
        assertEquals(ErrorCode.FAILED_PRECONDITION, again.code());
        assertTrue(again.getMessage().contains("HOSTED_CONSTANT and was read already"), again.getMessage());
    }

    @Test
    void aGraphGetsFreshLocalScratchOnEveryReplayAndARefusedReplayFreesIt() throws Exception {
        Buffer scratch = buf("null:0", MemoryMode.LOCAL);
        Buffer out = buf("null:0", MemoryMode.DEVICE);
        Graph g = sch.recordGraph(s, List.of(
                launch(1, null, 0, "set", "null:0", arg(scratch), sc(2)),
                launch(2, new long[] {1}, 0, "mix", "null:0", arg(scratch), arg(out), sc(0))));
        long used = sch.devices().getFirst().pool().usedBytes();
        for (int r = 0; r < 3; r++) {
            List<Event> ev = sch.replayGraph(s, g.handle(), new GraphReplay(0, null, null, null, CommandSpec.NO_DEADLINE), null);
            ev.getLast().toFuture().get(10, TimeUnit.SECONDS);
            assertEquals(EventState.SUCCEEDED, ev.getLast().state(), () -> String.valueOf(ev.getLast().failure()));
        }
        nextEvent = 100;
        assertArrayEquals(new long[] {13, 39, 65, 91}, f.readI64(s, out, 0, nextEvent++), "three replays of out = 3 * out + (1, 3, 5, 7)");
        long[] taken = {100, 101};
        nextEvent = 102;
        assertThrows(ArraydException.class, () -> sch.replayGraph(s, g.handle(),
                new GraphReplay(taken[0], null, null, null, CommandSpec.NO_DEADLINE), null), "ids already used");
        assertEquals(used, sch.devices().getFirst().pool().usedBytes(), "every replay's scratch is freed, the refused one's too");
        assertEquals(scratch, sch.buffer(s, scratch.handle()), "the recorded LOCAL handle itself is never consumed by replays");
    }

    @Test
    void aLocalBufferLastsOneBatch() throws Exception {
        Buffer scratch = buf("null:0", MemoryMode.LOCAL);
        Buffer out = buf("null:0", MemoryMode.DEVICE);
        List<Event> ev = sch.submit(s, List.of(
                launch(nextEvent++, null, 0, "set", "null:0", arg(scratch), sc(2)),
                launch(nextEvent++, null, 0, "mix", "null:0", arg(scratch), arg(out), sc(0))), null);
        ev.getLast().toFuture().get(10, TimeUnit.SECONDS);
        assertArrayEquals(new long[] {1, 3, 5, 7}, f.readI64(s, out, 0, nextEvent++));
        assertEquals(ErrorCode.NOT_FOUND, assertThrows(ArraydException.class,
                () -> sch.submit(s, List.of(launch(nextEvent, null, 0, "set", "null:0", arg(scratch), sc(2))), null)).code());
    }

    @Test
    void aVolatileUploadReplacesTheHostCopyAndInvalidatesOtherDevices() throws Exception {
        Buffer v = buf("null:0", MemoryMode.HOSTED_VOLATILE);
        Buffer out = buf("null:1", MemoryMode.DEVICE);
        run(launch(nextEvent++, null, 0, "mix", "null:1", arg(v), arg(out), sc(0))); // replica on null:1
        run(new CommandSpec(nextEvent++, null, 0, new CommandSpec.UploadOp(v.handle(), 0, MemorySegment.ofArray(new long[] {1, 1, 1, 1}))));
        Map<String, ReplicaState> st = sch.replicaStates(v);
        assertEquals(ReplicaState.SHARED, st.get("host"));
        assertEquals(1, st.values().stream().filter(x -> x == ReplicaState.INVALID).count(), st::toString);
        run(launch(nextEvent++, null, 0, "mix", "null:1", arg(v), arg(out), sc(0)));
        assertArrayEquals(new long[] {1, 1, 1, 1}, f.readI64(s, out, 0, nextEvent++));
    }
}
