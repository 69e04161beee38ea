package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelSource;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import dev.arrayd.devices.nullbackend.NullBackend;
import org.junit.jupiter.api.Test;

class SchedulerTest extends TwoDevicesSession {

    @Override
    String sessionName() {
        return "test";
    }

    private Buffer newBuf(int n) {
        return sch.createBuffer(s, DType.I64, new long[] {n}, "", "");
    }

    private static CommandSpec launch(long event, CompiledKernel kernel, long[] waits, CommandSpec.Arg... args) {
        return launchOn("null:0", event, kernel, waits, args);
    }

    private static CommandSpec launchOn(String device, long event, CompiledKernel kernel, long[] waits,
            CommandSpec.Arg... args) {
        return new CommandSpec(event, waits, 0, new CommandSpec.LaunchOp(kernel.handle(), new long[] {4}, null,
                List.of(args), device));
    }

    private static CommandSpec.Arg buf(Buffer b) {
        return new CommandSpec.BufferArg(b.handle());
    }

    private static CommandSpec.Arg sc(long v) {
        return new CommandSpec.ScalarArg(KernelArg.Scalar.i64(v));
    }

    private static Event await(Event e) throws Exception {
        return e.toFuture().get(10, TimeUnit.SECONDS);
    }

    private long[] read(Buffer b, long event) throws Exception {
        Event e = await(sch.submit(s, List.of(new CommandSpec(event, null, 0, new CommandSpec.DownloadOp(b.handle(), 0, 0, Long.MAX_VALUE))), null).getFirst());
        assertEquals(EventState.SUCCEEDED, e.state(), () -> String.valueOf(e.failure()));
        long[] out = new long[(int) (b.sizeBytes() / 8)];
        ByteBuffer.wrap((byte[]) e.result()).order(ByteOrder.nativeOrder()).asLongBuffer().get(out);
        return out;
    }

    @Test
    void failureIsStickyThroughDataDependenciesButNotThroughOrderOnly() throws Exception {
        Buffer out = newBuf(4);
        Buffer other = newBuf(4);
        List<Event> ev = sch.submit(s, List.of(
                launch(1, k.get("boom"), null, buf(out)),          // fails
                launch(2, k.get("mix"), null, buf(out), buf(other), sc(1)), // reads out: RAW on a failed writer
                launch(3, k.get("set"), new long[] {2}, buf(other), sc(5)),  // waits on 2 explicitly
                launch(4, k.get("set"), null, buf(out), sc(7))),   // overwrites out: WAW only orders
                null);
        for (Event e : ev) {
            await(e);
        }
        assertEquals(ErrorCode.OUT_OF_RANGE, ev.get(0).failure().code());
        assertTrue(ev.get(1).isFailed());
        assertEquals(ErrorCode.OUT_OF_RANGE, ev.get(1).failure().code(), "root cause's code is kept");
        assertTrue(ev.get(1).failure().getMessage().contains("event 1"), ev.get(1).failure().getMessage());
        assertTrue(ev.get(2).isFailed());
        assertTrue(ev.get(2).failure().getMessage().startsWith("waited on event 1,"), "names the root, not the chain");
        assertEquals(EventState.SUCCEEDED, ev.get(3).state());
        assertEquals(List.of(1L, 8L, 15L, 22L), java.util.Arrays.stream(read(out, 5)).boxed().toList());
        // failure is sticky in the event table too
        assertTrue(sch.event(s, 1).isFailed());
        assertSame(Event.SUCCEEDED, sch.event(s, 4));
    }

    @Test
    void aPartialWriteOnAnotherDeviceAfterAFailedWriterFailsWithItsRootCause() throws Exception {
        // memory on null:1 that held another buffer's data, free again: a new replica there may be given it
        Buffer secret = newBuf(4);
        await(sch.submit(s, List.of(launchOn("null:1", nextEvent++, k.get("set"), null, buf(secret), sc(4242))), null)
                .getFirst());
        sch.destroyBuffer(s, secret.handle());
        Buffer out = newBuf(4);
        long onOne = sch.createStream(s, "null:1").handle();
        List<Event> ev = sch.submit(s, List.of(
                launchOn("null:0", 1001, k.get("boom"), null, buf(out)), // fails on null:0, out's last writer
                // one element of out written on null:1: the rest is what the transfer from null:0 was to bring
                // (RAW on the failed boom), never the memory's old bytes
                new CommandSpec(1002, null, onOne, new CommandSpec.UploadOp(out.handle(), 8, MemorySegment.ofArray(new long[] {5}))),
                new CommandSpec(1003, null, 0, new CommandSpec.DownloadOp(out.handle(), 0, 0, Long.MAX_VALUE)),
                // a launch may leave elements alone: it keeps the rest as well
                launchOn("null:1", 1004, k.get("set"), null, buf(out), sc(7))), null);
        for (Event e : ev) {
            await(e);
        }
        for (int i = 1; i < ev.size(); i++) {
            Event e = ev.get(i);
            assertTrue(e.isFailed(), () -> "event " + e.id() + " " + e.state() + " " + e.result());
            assertEquals(ErrorCode.OUT_OF_RANGE, e.failure().code(), String.valueOf(e.failure()));
            assertTrue(e.failure().getMessage().startsWith("waited on event 1001,"), e.failure().getMessage());
        }
        // a write of the whole buffer puts its data there; writes of parts after it run
        List<Event> after = sch.submit(s, List.of(
                new CommandSpec(1005, null, onOne, new CommandSpec.FillOp(out.handle(), KernelArg.Scalar.i64(3), 0, 0)),
                new CommandSpec(1006, null, onOne, new CommandSpec.UploadOp(out.handle(), 8, MemorySegment.ofArray(new long[] {5}))),
                launchOn("null:1", 1007, k.get("acc"), null, buf(out), buf(out))), null);
        for (Event e : after) {
            assertEquals(EventState.SUCCEEDED, await(e).state(), () -> String.valueOf(e.failure()));
        }
        assertArrayEquals(new long[] {6, 10, 6, 6}, read(out, 1008));
    }

    @Test
    void inASessionWhoseDependenciesOnlyOrderEachCommandFailsOnlyByItself() throws Exception {
        Session forwarded = sch.openSession("entry", 10_000);
        forwarded.setDependenciesOnlyOrder(true);
        Map<String, CompiledKernel> kf = f.compileAll(forwarded);
        Buffer out = sch.createBuffer(forwarded, DType.I64, new long[] {4}, "", "");
        Buffer other = sch.createBuffer(forwarded, DType.I64, new long[] {4}, "", "");
        List<Event> ev = sch.submit(forwarded, List.of(
                launchOn("null:0", 1, kf.get("boom"), null, buf(out)),                   // fails
                launchOn("null:1", 2, kf.get("mix"), null, buf(out), buf(other), sc(1)),  // reads out elsewhere
                launchOn("null:0", 3, kf.get("set"), new long[] {1}, buf(other), sc(5)),  // waits on 1
                new CommandSpec(4, null, 0, new CommandSpec.DownloadOp(out.handle(), 0, 0, Long.MAX_VALUE))), null);
        for (Event e : ev) {
            await(e);
        }
        assertEquals(ErrorCode.OUT_OF_RANGE, ev.get(0).failure().code());
        for (Event e : ev.subList(1, ev.size())) {
            assertEquals(EventState.SUCCEEDED, e.state(), () -> "event " + e.id() + ": " + e.failure());
        }
        Event read = await(sch.submit(forwarded, List.of(new CommandSpec(5, null, 0,
                new CommandSpec.DownloadOp(other.handle(), 0, 0, Long.MAX_VALUE))), null).getFirst());
        long[] got = new long[4];
        ByteBuffer.wrap((byte[]) read.result()).order(ByteOrder.nativeOrder()).asLongBuffer().get(got);
        assertArrayEquals(new long[] {1, 6, 11, 16}, got, "set ran after the failed boom it waited on");
        sch.closeSession(forwarded);
    }

    @Test
    void longFailureChainDoesNotOverflowTheStack() throws Exception {
        Buffer out = newBuf(4);
        Buffer other = newBuf(4);
        Event gate = new Event(0);
        List<CommandSpec> cmds = new java.util.ArrayList<>();
        cmds.add(launch(1, k.get("boom"), null, buf(out)));
        for (int i = 2; i <= 20_000; i++) {
            cmds.add(launch(i, k.get("mix"), new long[] {i - 1}, buf(out), buf(other), sc(1)));
        }
        List<Event> ev = sch.submit(s, cmds, null);
        await(ev.getLast());
        assertTrue(ev.getLast().isFailed());
        assertTrue(gate.fail(new ArraydException(ErrorCode.CANCELLED, "unused")));
    }

    @Test
    void batchIsAtomicAndErrorsNameTheCommand() {
        Buffer out = newBuf(4);
        ArraydException e = assertThrows(ArraydException.class, () -> sch.submit(s, List.of(
                launch(1, k.get("set"), null, buf(out), sc(1)),
                launch(2, k.get("set"), null, buf(out), new CommandSpec.ScalarArg(KernelArg.Scalar.f32(1f)))), null));
        assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
        assertEquals("commands[1]: launch.args[1]: f32 scalar (expected: i64 scalar for parameter k)", e.getMessage());
        assertThrows(ArraydException.class, () -> sch.event(s, 1), "nothing of a rejected batch is registered");
    }

    @Test
    void oneCommandSubmittedAloneIsABatchOfIt() throws Exception {
        Buffer out = newBuf(4);
        Event e = sch.submit(s, launch(11, k.get("set"), null, buf(out), sc(1)), null);
        assertEquals(11, e.id());
        await(e);
        assertEquals(EventState.SUCCEEDED, e.state(), () -> String.valueOf(e.failure()));
        // registered under its id: a later command waits on it by that id
        Event after = await(sch.submit(s, launch(13, k.get("set"), new long[] {11}, buf(out), sc(2)), null));
        assertEquals(EventState.SUCCEEDED, after.state(), () -> String.valueOf(after.failure()));
        ArraydException bad = assertThrows(ArraydException.class, () -> sch.submit(s,
                launch(12, k.get("set"), null, buf(out), new CommandSpec.ScalarArg(KernelArg.Scalar.f32(1f))), null));
        assertEquals("commands[0]: launch.args[1]: f32 scalar (expected: i64 scalar for parameter k)", bad.getMessage());
        assertThrows(ArraydException.class, () -> sch.event(s, 12), "nothing of a rejected command is registered");
    }

    @Test
    void badInputIsRejectedPrecisely() {
        Buffer out = newBuf(4);
        Buffer f32 = sch.createBuffer(s, DType.F32, new long[] {4}, "", "x");
        assertCode(ErrorCode.INVALID_ARGUMENT, "launch.args: 1 given (expected: 2 for kernel set(i64[] out, i64 k))",
                () -> sch.submit(s, List.of(launch(1, k.get("set"), null, buf(out))), null));
        assertCode(ErrorCode.INVALID_ARGUMENT, "expected: buffer of i64 for parameter out",
                () -> sch.submit(s, List.of(launch(1, k.get("set"), null, buf(f32), sc(1))), null));
        assertCode(ErrorCode.INVALID_ARGUMENT, "expected: buffer of i64 for parameter out",
                () -> sch.submit(s, List.of(launch(1, k.get("set"), null, sc(3), sc(1))), null));
        assertCode(ErrorCode.NOT_FOUND, "launch.kernel: kernel 0x7b (not found in this session)",
                () -> sch.submit(s, List.of(new CommandSpec(1, null, 0, new CommandSpec.LaunchOp(123, new long[] {1}, null, List.of(), ""))), null));
        assertCode(ErrorCode.INVALID_ARGUMENT, "global_dims[0]: 0 (expected: > 0)",
                () -> sch.submit(s, List.of(new CommandSpec(1, null, 0, new CommandSpec.LaunchOp(k.get("set").handle(), new long[] {0}, null, List.of(buf(out), sc(1)), ""))), null));
        assertCode(ErrorCode.INVALID_ARGUMENT, "local_dims[0]: 3 (expected: a divisor of launch.global_dims[0] = 4)",
                () -> sch.submit(s, List.of(new CommandSpec(1, null, 0, new CommandSpec.LaunchOp(k.get("set").handle(), new long[] {4}, new long[] {3}, List.of(buf(out), sc(1)), ""))), null));
        assertCode(ErrorCode.INVALID_ARGUMENT, "work-items in all",
                () -> sch.submit(s, List.of(new CommandSpec(1, null, 0, new CommandSpec.LaunchOp(k.get("set").handle(), new long[] {1L << 30, 1L << 30, 1L << 30}, null, List.of(buf(out), sc(1)), ""))), null));
        assertCode(ErrorCode.NOT_FOUND, "wait_events[0]: event 99 (not found in this session)",
                () -> sch.submit(s, List.of(launch(1, k.get("set"), new long[] {99}, buf(out), sc(1))), null));
        assertCode(ErrorCode.OUT_OF_RANGE, "upload: bytes [0, +40) (expected: within the 32 bytes of buffer",
                () -> sch.submit(s, List.of(new CommandSpec(1, null, 0, new CommandSpec.UploadOp(out.handle(), 0, MemorySegment.ofArray(new byte[40])))), null));
        assertCode(ErrorCode.INVALID_ARGUMENT, "fill.value: f32 scalar (expected: i64 for a buffer of i64)",
                () -> sch.submit(s, List.of(new CommandSpec(1, null, 0, new CommandSpec.FillOp(out.handle(), KernelArg.Scalar.f32(1), 0, 0))), null));
        assertCode(ErrorCode.INVALID_ARGUMENT, "dims[1]: -4 (expected: > 0)",
                () -> sch.createBuffer(s, DType.F32, new long[] {2, -4}, "", ""));
        assertCode(ErrorCode.INVALID_ARGUMENT, "(expected: at most 2^62 bytes of f64 in all)",
                () -> sch.createBuffer(s, DType.F64, new long[] {1L << 31, 1L << 31, 4}, "", ""));
        assertCode(ErrorCode.NOT_FOUND, "device: \"null:7\" (not found",
                () -> sch.createBuffer(s, DType.F32, new long[] {2}, "null:7", ""));
        assertCode(ErrorCode.RESOURCE_EXHAUSTED, "device null:0: cannot allocate",
                () -> sch.createBuffer(s, DType.F32, new long[] {1L << 30}, "", ""));
        // event ids: unique, positive, below 2^62
        assertCode(ErrorCode.INVALID_ARGUMENT, "event: -3 (expected: 1 <= id < 2^62",
                () -> sch.submit(s, List.of(launch(-3, k.get("set"), null, buf(out), sc(1))), null));
        sch.submit(s, List.of(launch(7, k.get("set"), null, buf(out), sc(1))), null);
        assertCode(ErrorCode.ALREADY_EXISTS, "event: 7 (already used in this session)",
                () -> sch.submit(s, List.of(launch(7, k.get("set"), null, buf(out), sc(1))), null));
        // the session keeps working after all of that
        assertEquals(2, sch.submit(s, List.of(launch(8, k.get("set"), null, buf(out), sc(1)),
                launch(0, k.get("set"), new long[] {8}, buf(out), sc(2))), null).size());
    }

    @Test
    void aNewBufferNeverShowsAnotherSessionsData() throws Exception {
        Session other = sch.openSession("other", 10_000);
        Buffer secret = sch.createBuffer(other, DType.I64, new long[] {64}, "", "");
        await(sch.submit(other, List.of(new CommandSpec(1, null, 0,
                new CommandSpec.FillOp(secret.handle(), KernelArg.Scalar.i64(0x5EC12E7L), 0, 0))), null).getFirst());
        sch.destroyBuffer(other, secret.handle());
        sch.closeSession(other);
        Buffer mine = newBuf(64); // best fit: the very block the secret was in
        for (long v : read(mine, 1)) {
            assertEquals(0L, v);
        }
    }

    @Test
    void inlineDownloadsAreBoundedByTheirResolvedSize() {
        Buffer big = newBuf(1024);
        assertCode(ErrorCode.INVALID_ARGUMENT, "download: 8192 bytes of buffer",
                () -> sch.submit(s, List.of(new CommandSpec(1, null, 0, new CommandSpec.DownloadOp(big.handle(), 0, 0, 4096))), null));
    }

    @Test
    void closingASessionTellsItsListeners() {
        Session t = sch.openSession("listened", 10_000);
        int[] told = {0};
        t.onClose(() -> told[0]++);
        sch.closeSession(t);
        assertEquals(1, told[0]);
        t.onClose(() -> told[0]++);
        assertEquals(2, told[0], "a listener added after close runs at once");
    }

    @Test
    void handlesOfAnotherSessionAreNotFound() {
        Buffer out = newBuf(4);
        Session other = sch.openSession("other", 10_000);
        assertCode(ErrorCode.NOT_FOUND, "not found in this session",
                () -> sch.submit(other, List.of(new CommandSpec(1, null, 0, new CommandSpec.DownloadOp(out.handle(), 0, 0, Long.MAX_VALUE))), null));
        assertCode(ErrorCode.NOT_FOUND, "not found in this session", () -> sch.destroyBuffer(other, out.handle()));
        sch.closeSession(other);
    }

    @Test
    void nativeSourceNeedsPermission() {
        SchedulerConfig strict = sch.config().withAllowNativeSource(false);
        try (TestDevices other = new TestDevices(1, 1 << 20, Map.of());
                Scheduler locked = new Scheduler(strict, List.of(other.devices.getFirst().device),
                        Map.of(NullBackend.NAME, other.backend.compiler()))) {
            Session ls = locked.openSession("x", 10_000);
            assertCode(ErrorCode.PERMISSION_DENIED, "--allow-native-source", () -> locked.compile(ls,
                    List.of(new ModuleSpec(new KernelSource(Dialect.C, "set", List.of(SchedulerFixture.SET)), ""))));
        }
    }

    @Test
    void compileErrorsAreInvalidArgumentAndLeaveNothingLoaded() {
        int before = f.loadedModules();
        assertCode(ErrorCode.INVALID_ARGUMENT, "no kernel 'set'", () -> sch.compile(s, List.of(
                new ModuleSpec(new KernelSource(Dialect.C, "mix", List.of(SchedulerFixture.MIX)), ""),
                new ModuleSpec(new KernelSource(Dialect.C, "nothing here", List.of(SchedulerFixture.SET)), ""))));
        assertEquals(before, f.loadedModules(), "the first module of the failed call was unloaded");
        assertCode(ErrorCode.INVALID_ARGUMENT, "name: \"1bad\" (expected: a C identifier)", () -> sch.compile(s, List.of(
                new ModuleSpec(new KernelSource(Dialect.C, "x", List.of(new dev.arrayd.devices.api.KernelSignature("1bad", List.of()))), ""))));
        assertCode(ErrorCode.INVALID_ARGUMENT, "dialect: CUDA_C (no available backend compiles it", () -> sch.compile(s, List.of(
                new ModuleSpec(new KernelSource(Dialect.CUDA_C, "mix", List.of(SchedulerFixture.MIX)), ""))));
    }

    @Test
    void moduleStaysLoadedUntilItsLastLaunchCompletes() throws Exception {
        Buffer out = newBuf(4);
        int loaded = f.loadedModules();
        Event gate = new Event(0);
        // hold the launch back behind an explicit wait that we control through a failing chain:
        // simply submit, destroy the kernel at once, and check the launch still ran.
        List<Event> ev = sch.submit(s, List.of(launch(1, k.get("set"), null, buf(out), sc(3))), null);
        sch.destroyKernel(s, k.get("set").handle());
        sch.destroyKernel(s, k.get("mix").handle());
        sch.destroyKernel(s, k.get("acc").handle());
        await(ev.getFirst());
        assertEquals(EventState.SUCCEEDED, ev.getFirst().state());
        assertEquals(loaded, f.loadedModules(), "boom still holds the module");
        sch.destroyKernel(s, k.get("boom").handle());
        assertEquals(loaded - 1, f.loadedModules(), "unloaded with its last handle");
        assertEquals(List.of(1L, 4L, 7L, 10L), java.util.Arrays.stream(read(out, 2)).boxed().toList());
        assertTrue(gate.succeed(0, null));
    }

    @Test
    void destroyedBufferIsFreedAfterItsPendingCommands() throws Exception {
        Buffer out = newBuf(1 << 10);
        long used = out.device().pool().usedBytes();
        List<Event> ev = sch.submit(s, List.of(new CommandSpec(1, null, 0, new CommandSpec.FillOp(out.handle(), KernelArg.Scalar.i64(9), 0, 0)),
                new CommandSpec(2, null, 0, new CommandSpec.DownloadOp(out.handle(), 0, 0, Long.MAX_VALUE))), null);
        sch.destroyBuffer(s, out.handle());
        await(ev.get(1));
        assertEquals(9L, ByteBuffer.wrap((byte[]) ev.get(1).result()).order(ByteOrder.nativeOrder()).getLong(8));
        assertEquals(used - (8 << 10), out.device().pool().usedBytes());
        assertCode(ErrorCode.NOT_FOUND, "not found in this session", () -> sch.destroyBuffer(s, out.handle()));
    }

    @Test
    void streamsRunInOrderAndReportIdle() throws Exception {
        Buffer out = newBuf(4);
        Stream st = sch.createStream(s, "null:1");
        // a stream on another device works on any buffer: its replica there is written, the one on null:0 goes stale
        await(sch.submit(s, List.of(new CommandSpec(1000, null, st.handle(), new CommandSpec.FillOp(out.handle(), KernelArg.Scalar.i64(1), 0, 0))), null).getFirst());
        assertEquals(Map.of("null:0", ReplicaState.INVALID, "null:1", ReplicaState.MODIFIED), sch.replicaStates(out));
        assertEquals(1L, read(out, 1001)[3], "read where it is current");
        Buffer on1 = sch.createBuffer(s, DType.I64, new long[] {4}, "null:1", "");
        for (int i = 1; i <= 200; i++) {
            sch.submit(s, List.of(new CommandSpec(i, null, st.handle(), new CommandSpec.FillOp(on1.handle(), KernelArg.Scalar.i64(i), 0, 1))), null);
        }
        await(st.allWork());
        assertTrue(st.isIdle());
        assertEquals(200L, read(on1, 1002)[0]);
        sch.destroyStream(s, st.handle());
    }

    @Test
    void closingASessionFreesEverything() throws Exception {
        Session t = sch.openSession("short-lived", 10_000);
        Map<String, CompiledKernel> kt = f.compileAll(t);
        Buffer b = sch.createBuffer(t, DType.I64, new long[] {4}, "", "");
        sch.createStream(t, "");
        List<Event> ev = sch.submit(t, List.of(new CommandSpec(1, null, 0, new CommandSpec.LaunchOp(kt.get("set").handle(),
                new long[] {4}, null, List.of(buf(b), sc(2)), ""))), null);
        sch.closeSession(t);
        await(ev.getFirst());
        assertCode(ErrorCode.NOT_FOUND, "session: ", () -> sch.session(t.token()));
        assertCode(ErrorCode.FAILED_PRECONDITION, "is closed", () -> sch.createBuffer(t, DType.F32, new long[] {1}, "", ""));
    }

    private static void assertCode(ErrorCode code, String fragment, Runnable r) {
        ArraydException e = assertThrows(ArraydException.class, r::run);
        assertEquals(code, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains(fragment), () -> "\"" + e.getMessage() + "\" should contain \"" + fragment + "\"");
    }
}
