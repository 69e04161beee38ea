package dev.arrayd.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CommandBatch;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SessionTest {
    private static final KernelSpec VADD = KernelSpec.entry("vadd")
            .buffer("a", DType.F32, Access.READ)
            .buffer("b", DType.F32, Access.READ)
            .buffer("c", DType.F32, Access.WRITE)
            .scalar("n", DType.I32);

    private FakeServerHarness h;
    private Session s;
    private ExecutorService pool;

    @BeforeEach
    void start() throws Exception {
        h = new FakeServerHarness();
        s = h.client.openSession("test").get(5, TimeUnit.SECONDS);
        pool = Executors.newFixedThreadPool(5);
    }

    @AfterEach
    void stop() throws Exception {
        pool.shutdownNow();
        h.close();
    }

    private static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(5, TimeUnit.SECONDS);
    }

    private static ArraydCommandException failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
        return assertInstanceOf(ArraydCommandException.class, e.getCause());
    }

    /** Makes the next batch wait on the daemon side until the returned latch opens. */
    private CountDownLatch gateNextBatch() {
        CountDownLatch gate = new CountDownLatch(1);
        h.fake.batchArrived = new CountDownLatch(1);
        h.fake.gate = gate;
        return gate;
    }

    @Test
    void writeAndReadRoundTripMoreThanThreeMiBInChunks() throws Exception {
        int n = (3 << 20) / 4 + 12345; // 3 MiB + 49380 bytes
        float[] data = new float[n];
        for (int i = 0; i < n; i++) {
            data[i] = i * 0.5f;
        }
        BufferHandle b = await(s.createBuffer(DType.F32, n));
        assertEquals(4L * n, b.sizeBytes());
        Event written = s.write(b, data);
        EventResult r = await(written.future());
        assertEquals(EventState.SUCCEEDED, r.state());
        // sent as 1 MiB Upload commands on the session stream, each waiting on the one before
        Command lastChunk = commandWithEvent(written.id());
        assertEquals(3L << 20, lastChunk.getUpload().getOffsetBytes());
        assertEquals(List.of(written.id() - 1), lastChunk.getWaitEventsList());
        assertEquals(4L * n - (3L << 20), lastChunk.getUpload().getData().size());

        assertArrayEquals(data, await(s.readFloats(b)));
        // a sub-range
        float[] part = new float[3];
        await(s.read(b, 4L * 1000, 12)).asFloatBuffer().get(part);
        assertArrayEquals(new float[] {500f, 500.5f, 501f}, part);
    }

    @Test
    void launchThenDownloadAndReadSeeTheKernelsWrites() throws Exception {
        Map<String, KernelHandle> kernels = await(s.compile(KernelModuleSpec.of(Dialect.C, "void vadd(...) {}", VADD)));
        KernelHandle vadd = kernels.get("vadd");
        assertEquals(VADD, vadd.signature());
        int n = 1024;
        BufferHandle a = await(s.createBuffer(DType.F32, n));
        BufferHandle b = await(s.createBuffer(DType.F32, n));
        BufferHandle c = await(s.createBuffer(DType.F32, new long[] {n}, BufferOptions.defaults().zeroInit(true)));
        float[] av = new float[n];
        float[] bv = new float[n];
        for (int i = 0; i < n; i++) {
            av[i] = i;
            bv[i] = 2 * i;
        }
        Event wa = s.write(a, av);
        java.nio.ByteBuffer bb = java.nio.ByteBuffer.allocate(4 * n).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        bb.asFloatBuffer().put(bv);
        Event ub = s.upload(b, bb.array());
        Event launched = s.launch(Launch.of(vadd).global(n).local(64).args(a, b, c, n).waitFor(wa, ub));
        Event down = s.download(c, launched);
        CompletableFuture<float[]> read = s.readFloats(c); // ordered after the launch without waiting on it

        EventResult result = await(down.future());
        assertEquals(EventState.SUCCEEDED, result.state());
        float[] expected = new float[n];
        for (int i = 0; i < n; i++) {
            expected[i] = 3 * i;
        }
        assertArrayEquals(expected, result.floats());
        assertArrayEquals(expected, await(read));
        assertEquals(1000, await(launched.future()).deviceNanos());

        List<String> arrivals = h.fake.arrivals;
        assertTrue(arrivals.indexOf("cmd:" + launched.id()) < arrivals.indexOf("cmd:" + (down.id() + 1)),
                "the read's download is sent after the launch: " + arrivals);
        assertTrue(wa.id() < ub.id() && ub.id() < launched.id() && launched.id() < down.id(), "ids increase");
        Command sent = commandWithEvent(launched.id());
        assertEquals(List.of(wa.id(), ub.id()), sent.getWaitEventsList());
        assertEquals(n, sent.getLaunch().getArgs(3).getScalar().getI32());
    }

    @Test
    void concurrentSubmissionsShareBatchesAndAllComplete() throws Exception {
        BufferHandle buf = await(s.createBuffer(DType.F32, 16));
        int batchesBefore = h.fake.batches.size();
        CountDownLatch gate = gateNextBatch();
        Future<Event> first = pool.submit(() -> s.fill(buf, 1f)); // its thread now sends, held by the gate
        assertTrue(h.fake.batchArrived.await(5, TimeUnit.SECONDS));

        int threads = 4;
        int perThread = 250;
        List<Future<List<Event>>> submitted = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int value = t;
            submitted.add(pool.submit(() -> {
                List<Event> mine = new ArrayList<>();
                for (int i = 0; i < perThread; i++) {
                    mine.add(s.fill(buf, value, i % 16, 1, CommandOptions.defaults()));
                }
                return mine;
            }));
        }
        List<Event> events = new ArrayList<>();
        for (Future<List<Event>> f : submitted) {
            events.addAll(f.get(5, TimeUnit.SECONDS)); // returned at once: the sending thread is busy
        }
        gate.countDown();
        events.add(first.get(5, TimeUnit.SECONDS));
        for (Event e : events) {
            assertEquals(EventState.SUCCEEDED, await(e.future()).state());
        }
        int commands = threads * perThread + 1;
        List<CommandBatch> batches = h.fake.batches.subList(batchesBefore, h.fake.batches.size());
        assertEquals(commands, batches.stream().mapToInt(CommandBatch::getCommandsCount).sum());
        assertEquals(3, batches.size(), "1 gated + 512 + 488 commands");
        assertTrue(batches.stream().allMatch(b -> b.getCommandsCount() <= CommandOutbox.MAX_BATCH_COMMANDS));
        assertStrictlyIncreasingEventIds();
    }

    @Test
    void batchRejectedFailsExactlyThatBatchsEvents() throws Exception {
        BufferHandle a = await(s.createBuffer(DType.F32, 16));
        BufferHandle unknown = new BufferHandle(9999, DType.F32, List.of(16L), 64, "cpu:0");
        Event before = s.fill(a, 1f);
        assertEquals(EventState.SUCCEEDED, await(before.future()).state());

        CountDownLatch gate = gateNextBatch();
        Future<Event> gated = pool.submit(() -> s.fill(a, 2f));
        assertTrue(h.fake.batchArrived.await(5, TimeUnit.SECONDS));
        Event e1 = s.fill(a, 3f);
        Event e2 = s.fill(unknown, 4f);
        Event e3 = s.download(a);
        gate.countDown();

        assertEquals(EventState.SUCCEEDED, await(gated.get(5, TimeUnit.SECONDS).future()).state());
        for (Event e : List.of(e1, e2, e3)) {
            ArraydCommandException x = failure(e.future());
            assertEquals(Status.Code.INVALID_ARGUMENT, x.code());
            assertEquals(e.id(), x.event());
            assertEquals("commands[1]: buffer 9999 (expected: a buffer of this session)", x.status().getDescription());
        }
        Event after = s.download(a);
        assertEquals(2f, await(after.future()).floats()[0], "the rejected batch did not run");
        assertEquals(0, ((SessionImpl) s).batchesSent() - h.fake.batches.size());
    }

    @Test
    void streamErrorFailsEveryPendingEventAndLaterCommands() throws Exception {
        KernelHandle hang = await(s.compile(KernelModuleSpec.of(Dialect.C, "", KernelSpec.entry("hang")))).get("hang");
        BufferHandle a = await(s.createBuffer(DType.F32, 4));
        Event done = s.fill(a, 1f);
        Event pending1 = s.launch(Launch.of(hang).global(1));
        Event pending2 = s.launch(Launch.of(hang).global(1).waitFor(done));
        assertEquals(EventState.SUCCEEDED, await(done.future()).state());

        h.fake.failStreams(Status.UNAVAILABLE.withDescription("daemon went away"));

        for (Event e : List.of(pending1, pending2)) {
            ArraydCommandException x = failure(e.future());
            assertEquals(Status.Code.UNAVAILABLE, x.code());
            assertEquals("daemon went away", x.status().getDescription());
        }
        assertEquals(Status.Code.UNAVAILABLE, failure(s.fill(a, 2f).future()).code());
        assertTrue(done.future().isDone() && !done.future().isCompletedExceptionally());
    }

    @Test
    void waitsOnAnEventNotYetSentAreCarriedInWaitEvents() throws Exception {
        BufferHandle a = await(s.createBuffer(DType.F32, 8));
        BufferHandle b = await(s.createBuffer(DType.F32, 8));
        CountDownLatch gate = gateNextBatch();
        Future<Event> gated = pool.submit(() -> s.fill(a, 1f));
        assertTrue(h.fake.batchArrived.await(5, TimeUnit.SECONDS));
        int batchesWhileGated = h.fake.batches.size();

        Event fill = s.fill(b, 5f);                      // enqueued, not sent
        Event copy = s.copy(b, a, fill);                 // waits on it
        CompletableFuture<List<EventResult>> waited = s.waitEvents(copy, fill);
        assertEquals(batchesWhileGated, h.fake.batches.size(), "nothing sent while the sender is held");
        gate.countDown();

        List<EventResult> results = await(waited);
        assertEquals(List.of(copy.id(), fill.id()), results.stream().map(EventResult::event).toList());
        assertEquals(List.of(fill.id()), commandWithEvent(copy.id()).getWaitEventsList());
        assertTrue(fill.id() < copy.id());
        await(gated.get(5, TimeUnit.SECONDS).future());
        assertArrayEquals(new float[] {5, 5, 5, 5, 5, 5, 5, 5}, await(s.readFloats(a)));
    }

    @Test
    void deadlinesTravelAsTheCommandsTimestamps() throws Exception {
        KernelHandle vadd = await(s.compile(KernelModuleSpec.of(Dialect.C, "", VADD))).get("vadd");
        BufferHandle a = await(s.createBuffer(DType.F32, 4));
        java.time.Instant at = java.time.Instant.ofEpochSecond(4_000_000_000L, 123_456_789);
        Event fill = s.fill(a, 1f, 0, 0, CommandOptions.defaults().deadline(at));
        Event launch = s.launch(Launch.of(vadd).global(4).args(a, a, a, 4).deadline(at.plusNanos(1)));
        Event plain = s.fill(a, 2f);
        await(plain.future());
        assertEquals(com.google.protobuf.Timestamp.newBuilder().setSeconds(4_000_000_000L).setNanos(123_456_789).build(),
                commandWithEvent(fill.id()).getDeadline());
        assertEquals(123_456_790, commandWithEvent(launch.id()).getDeadline().getNanos());
        assertTrue(!commandWithEvent(plain.id()).hasDeadline(), "no deadline unless one is given");
    }

    @Test
    void failedCommandFailsItsEventWithTheDaemonsStatus() throws Exception {
        KernelHandle other = await(s.compile(KernelModuleSpec.of(Dialect.C, "", KernelSpec.entry("other")))).get("other");
        ArraydCommandException x = failure(s.launch(Launch.of(other).global(4)).future());
        assertEquals(Status.Code.UNIMPLEMENTED, x.code());
        assertTrue(x.getMessage().contains("kernel: other"), x.getMessage());
    }

    @Test
    void compileErrorCarriesTheDiagnostics() {
        CompletableFuture<Map<String, KernelHandle>> f =
                s.compile(KernelModuleSpec.of(Dialect.C, "#error broken", VADD).backend("cpu"));
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
        StatusRuntimeException x = assertInstanceOf(StatusRuntimeException.class, e.getCause());
        assertEquals(Status.Code.INVALID_ARGUMENT, x.getStatus().getCode());
        assertTrue(x.getStatus().getDescription().contains("error: #error"));
    }

    @Test
    void launchArgumentsAreCheckedAgainstTheSignature() throws Exception {
        KernelHandle vadd = await(s.compile(KernelModuleSpec.of(Dialect.C, "", VADD))).get("vadd");
        BufferHandle f = await(s.createBuffer(DType.F32, 4));
        BufferHandle i = await(s.createBuffer(DType.I32, 4));
        assertEquals("args[3]: \"x\" (expected: a number for scalar parameter n of type i32)",
                assertThrows(IllegalArgumentException.class,
                        () -> s.launch(Launch.of(vadd).global(4).args(f, f, f, "x"))).getMessage());
        assertEquals("args[3]: 2.5 (expected: an integer in i32 range for scalar parameter n of type i32)",
                assertThrows(IllegalArgumentException.class,
                        () -> s.launch(Launch.of(vadd).global(4).args(f, f, f, 2.5))).getMessage());
        assertEquals("args[1]: buffer " + i.id() + " of type i32 (expected: a buffer of type f32 for buffer parameter b)",
                assertThrows(IllegalArgumentException.class,
                        () -> s.launch(Launch.of(vadd).global(4).args(f, i, f, 4))).getMessage());
        assertEquals("args: 2 values (expected: 4, one per parameter of vadd)",
                assertThrows(IllegalArgumentException.class,
                        () -> s.launch(Launch.of(vadd).global(4).args(f, f))).getMessage());
        assertEquals("local[0]: 3 (expected: a divisor of global[0] = 4)",
                assertThrows(IllegalArgumentException.class,
                        () -> s.launch(Launch.of(vadd).global(4).local(3).args(f, f, f, 4))).getMessage());
        assertEquals("data: 20 bytes at offsetBytes 0 (expected: <= 16, the rest of buffer " + f.id() + ")",
                assertThrows(IllegalArgumentException.class, () -> s.write(f, new byte[20])).getMessage());
        // a whole double is fine for an i32 scalar
        assertEquals(EventState.SUCCEEDED, await(s.launch(Launch.of(vadd).global(4).args(f, f, f, 4.0)).future()).state());
        assertEquals(4, commandWithEvent(h.fake.batches.getLast().getCommands(0).getEvent())
                .getLaunch().getArgs(3).getScalar().getI32());
    }

    @Test
    void copyFillUploadDestroyAndStreams() throws Exception {
        BufferHandle a = await(s.createBuffer(DType.I32, 4));
        BufferHandle b = await(s.createBuffer(DType.I32, 4));
        StreamHandle st = await(s.createStream("cpu:1"));
        assertEquals("cpu:1", st.device());
        CommandOptions onStream = CommandOptions.defaults().on(st);
        s.fill(a, 7, 0, 0, onStream);
        s.upload(a, 4, java.nio.ByteBuffer.wrap(new byte[] {9, 0, 0, 0}), onStream);
        Event copied = s.copy(a, b);
        assertEquals(st.id(), h.fake.batches.get(h.fake.batches.size() - 3).getCommands(0).getStream());
        await(copied.future());
        assertEquals(0L, await(s.awaitStream(st)).event());
        assertArrayEquals(new int[] {7, 9, 7, 7}, await(s.readInts(b)));
        await(s.destroy(b));
        assertTrue(!h.fake.buffers.containsKey(b.id()));
        ExecutionException gone = assertThrows(ExecutionException.class, () -> s.destroy(b).get(5, TimeUnit.SECONDS));
        assertEquals(Status.Code.NOT_FOUND, assertInstanceOf(StatusRuntimeException.class, gone.getCause()).getStatus().getCode());
    }

    @Test
    void closeFailsOnlyEventsStillPendingAndClosesTheSession() throws Exception {
        KernelHandle hang = await(s.compile(KernelModuleSpec.of(Dialect.C, "", KernelSpec.entry("hang")))).get("hang");
        BufferHandle a = await(s.createBuffer(DType.F32, 4));
        Event done = s.fill(a, 1f);
        Event pending = s.launch(Launch.of(hang).global(1));
        await(done.future());
        s.close();
        assertEquals(Status.Code.CANCELLED, failure(pending.future()).code());
        assertEquals(EventState.SUCCEEDED, done.future().getNow(null).state());
        assertEquals(List.of(s.id()), h.fake.closedSessions);
        assertThrows(IllegalStateException.class, () -> s.fill(a, 1f));
        s.close(); // idempotent
    }

    private Command commandWithEvent(long event) {
        for (CommandBatch b : h.fake.batches) {
            for (Command c : b.getCommandsList()) {
                if (c.getEvent() == event) {
                    return c;
                }
            }
        }
        throw new AssertionError("no command with event " + event);
    }

    private void assertStrictlyIncreasingEventIds() {
        long last = 0;
        for (CommandBatch b : h.fake.batches) {
            for (Command c : b.getCommandsList()) {
                assertTrue(c.getEvent() > last, "event " + c.getEvent() + " after " + last);
                last = c.getEvent();
            }
        }
    }
}
