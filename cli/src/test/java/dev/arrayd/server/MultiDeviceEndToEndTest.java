package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.client.Access;
import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.ArraydCommandException;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.BufferOptions;
import dev.arrayd.client.CommandOptions;
import dev.arrayd.client.DType;
import dev.arrayd.client.Event;
import dev.arrayd.client.GraphHandle;
import dev.arrayd.client.GraphRecorder;
import dev.arrayd.client.GraphReplay;
import dev.arrayd.client.Ir;
import dev.arrayd.client.IrExpr;
import dev.arrayd.client.IrKernelSpec;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.MemoryMode;
import dev.arrayd.client.MergeBuffer;
import dev.arrayd.client.MergeMode;
import dev.arrayd.client.Padding;
import dev.arrayd.client.Session;
import dev.arrayd.client.StreamHandle;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Several devices through the real gRPC stack and client-java, on {@code --devices cpu:2}: automatic
 * transfers and replica states, explicit transfers, merge copies and the merge-buffer argument,
 * memory modes, recorded graphs replayed on the session stream (with new scalars and rebound buffers),
 * and a replay refused as a whole.
 */
class MultiDeviceEndToEndTest {

    static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(60, TimeUnit.SECONDS);
    }

    /** y[i] = a * x[i] + y[i]. */
    static final IrKernelSpec AXPY = Ir.kernel("axpy")
            .scalar("a", DType.F32)
            .buffer("x", DType.F32, Access.READ, Ir.param("n"))
            .buffer("y", DType.F32, Access.READ_WRITE, Ir.param("n"))
            .scalar("n", DType.I64, 0, 1L << 40)
            .body(b -> {
                IrExpr i = b.let("i", Ir.globalId(0));
                b.when(i.lt(Ir.param("n")), then ->
                        then.store("y", i, Ir.param("a").mul(Ir.load("x", i)).add(Ir.load("y", i))));
            });

    /**
     * A PER_STREAM gradient: two streams (one per device) each accumulate their own instance, then
     * stream 0 merges stream 1's instance through its merge buffer; the quota sees the instances.
     */
    @Test
    void perStreamBuffersGiveEachStreamItsOwnInstanceAndMergeAcrossStreams() throws Exception {
        ServerOptions options = ServerOptions.defaults().withPort(0).withDevices("cpu:2").withCpuMemoryBytes(256L << 20);
        int n = 1024;
        try (ArraydServer server = ArraydServer.start(options);
                ArraydClient c = ArraydClient.connect("127.0.0.1:" + server.port());
                Session s = await(c.openSession("per-stream"))) {
            KernelHandle axpy = await(s.compile(KernelModuleSpec.ir(AXPY))).get("axpy");
            float[] ones = new float[n];
            java.util.Arrays.fill(ones, 1f);
            BufferHandle x = await(s.createBuffer(DType.F32, new long[] {n}, BufferOptions.defaults().device("cpu:0")));
            s.write(x, ones);
            BufferHandle grad = await(s.createBuffer(DType.F32, new long[] {n},
                    BufferOptions.defaults().device("cpu:0").perStream(true)));
            StreamHandle s0 = await(s.createStream("cpu:0"));
            StreamHandle s1 = await(s.createStream("cpu:1"));
            s.launch(Launch.of(axpy).global(n).args(2f, x, grad, (long) n).on(s0)); // s0's grad = 2
            s.launch(Launch.of(axpy).global(n).args(5f, x, grad, (long) n).on(s1)); // s1's grad = 5
            s.launch(Launch.of(axpy).global(n).args(5f, x, grad, (long) n).on(s1)); // s1's grad = 10
            s.mergeCopy(grad, s1, s0, MergeMode.COPY);
            await(s.launch(Launch.of(axpy).global(n).args(1f, MergeBuffer.INSTANCE, grad, (long) n).on(s0)).future());
            BufferHandle out = await(s.createBuffer(DType.F32, new long[] {n}, BufferOptions.defaults().device("cpu:1")));
            await(s.copyFromStream(grad, s0, out, CommandOptions.defaults().on(s1)).future());
            assertEquals(12f, await(s.readFloats(out))[n - 1], "s0's instance: its own 2 plus s1's 10");
            await(s.copyFromStream(grad, s1, out, CommandOptions.defaults().on(s1)).future());
            assertEquals(10f, await(s.readFloats(out))[0], "s1's instance, unchanged by s0's merge");
            assertEquals(Map.of(), await(s.replicas(grad)), "the handle itself holds no memory");
        }
    }

    @Test
    void buffersMoveBetweenDevicesThroughTransfersMergeBuffersAndGraphs() throws Exception {
        ServerOptions options = ServerOptions.defaults().withPort(0).withDevices("cpu:2").withCpuMemoryBytes(256L << 20);
        int n = 4096;
        try (ArraydServer server = ArraydServer.start(options);
                ArraydClient c = ArraydClient.connect("127.0.0.1:" + server.port());
                Session s = await(c.openSession("multi-device"))) {
            KernelHandle axpy = await(s.compile(KernelModuleSpec.ir(AXPY))).get("axpy");
            float[] xs = new float[n];
            for (int i = 0; i < n; i++) {
                xs[i] = i;
            }
            BufferHandle x = await(s.createBuffer(DType.F32, new long[] {n},
                    BufferOptions.defaults().device("cpu:0").mode(MemoryMode.HOSTED_CONSTANT)));
            BufferHandle y = await(s.createBuffer(DType.F32, new long[] {n}, BufferOptions.defaults().device("cpu:1")));
            s.write(x, xs);
            // x is read on cpu:1: moved there by the daemon
            s.launch(Launch.of(axpy).global(n).args(2f, x, y, (long) n).device("cpu:1"));
            float[] ys = await(s.readFloats(y));
            assertEquals(2f * 7, ys[7]);
            assertEquals(Map.of("cpu:0", "S", "cpu:1", "S", "host", "S"), await(s.replicas(x)));
            assertEquals(Map.of("cpu:1", "M"), await(s.replicas(y)));
            // a second write to the HOSTED_CONSTANT buffer fails as a command
            ExecutionException twice = assertThrows(ExecutionException.class, () -> s.fill(x, 1f).future()
                    .get(30, TimeUnit.SECONDS));
            assertEquals(Status.Code.FAILED_PRECONDITION, ((ArraydCommandException) twice.getCause()).code());

            // explicit transfer, then a merge copy into a stream on cpu:0 read by a launch there
            await(s.transfer(y, "cpu:0").future());
            assertEquals(Map.of("cpu:0", "S", "cpu:1", "S"), await(s.replicas(y)));
            BufferHandle acc = await(s.createBuffer(DType.F32, new long[] {n}, BufferOptions.defaults().device("cpu:0")));
            StreamHandle merge = await(s.createStream("cpu:0"));
            s.mergeCopy(y, merge, MergeMode.COPY);
            await(s.launch(Launch.of(axpy).global(n).args(1f, MergeBuffer.INSTANCE, acc, (long) n).on(merge)).future());
            assertEquals(2f * 9, await(s.readFloats(acc))[9], "acc += merge(y)");

            // a graph: y2 = 3 * x on cpu:1, acc += y2 on cpu:0 through the merge buffer
            BufferHandle y2 = await(s.createBuffer(DType.F32, new long[] {n}, BufferOptions.defaults().device("cpu:1")));
            GraphRecorder rec = s.graphRecorder();
            int fill = rec.fill(y2, 0f);
            int scale = rec.launch(Launch.of(axpy).global(n).args(3f, x, y2, (long) n).device("cpu:1"), fill);
            int copy = rec.mergeCopy(y2, merge, MergeMode.COPY, scale);
            rec.launch(Launch.of(axpy).global(n).args(1f, MergeBuffer.INSTANCE, acc, (long) n).on(merge), copy);
            GraphHandle g = await(s.recordGraph(rec));
            assertEquals(4, g.size());
            List<Event> first = s.replay(g, GraphReplay.defaults());
            await(first.getLast().future());
            assertEquals(2f * 9 + 3f * 9, await(s.readFloats(acc))[9]);
            BufferHandle acc2 = await(s.createBuffer(DType.F32, new long[] {n}, BufferOptions.defaults().device("cpu:0")));
            List<Event> second = s.replay(g, GraphReplay.defaults().scalar(scale, 0, 5f).rebind(acc, acc2));
            await(second.getLast().future());
            assertEquals(5f * 9, await(s.readFloats(acc2))[9], "new scalar, rebound accumulator");
            assertEquals(2f * 9 + 3f * 9, await(s.readFloats(acc))[9], "the recorded accumulator untouched");
            assertTrue(second.getFirst().id() > first.getLast().id(), "replays take new event ids");

            // a graph over a padded buffer: an interior fill keeps the halo, a whole-padded fill reaches it
            BufferHandle padded = await(s.createBuffer(DType.F32, new long[] {4},
                    BufferOptions.defaults().device("cpu:0").padding(Padding.halo(1, 1, 9f))));
            GraphRecorder pr = s.graphRecorder();
            int interior = pr.fill(padded, 2f);
            GraphHandle pg = await(s.recordGraph(pr));
            await(s.replay(pg, GraphReplay.defaults()).getLast().future());
            assertArrayEquals(new float[] {9, 2, 2, 2, 2, 9}, wholeFloats(s, padded), "the halo keeps its value");
            GraphRecorder wr = s.graphRecorder();
            wr.fill(padded, 3f, true);
            await(s.replay(await(s.recordGraph(wr)), GraphReplay.defaults()).getLast().future());
            assertArrayEquals(new float[] {3, 3, 3, 3, 3, 3}, wholeFloats(s, padded), "whole padded: the halo too");
            assertEquals(0, interior);

            // a replay the daemon refuses fails all its events, and the session goes on
            BufferHandle unused = await(s.createBuffer(DType.F32, n));
            List<Event> refused = s.replay(g, GraphReplay.defaults().rebind(unused, acc2));
            for (Event e : refused) {
                ExecutionException r = assertThrows(ExecutionException.class, () -> e.future().get(30, TimeUnit.SECONDS));
                ArraydCommandException cause = (ArraydCommandException) r.getCause();
                assertEquals(Status.Code.INVALID_ARGUMENT, cause.code());
                assertTrue(cause.getMessage().contains("not used by graph"), cause.getMessage());
            }
            BufferHandle wrong = await(s.createBuffer(DType.F32, 8));
            assertThrows(IllegalArgumentException.class, () -> s.replay(g, GraphReplay.defaults().rebind(acc, wrong)));
            await(s.destroy(g));
            StatusRuntimeException gone = assertThrows(StatusRuntimeException.class, () -> {
                try {
                    await(s.destroy(g));
                } catch (ExecutionException e) {
                    throw (RuntimeException) e.getCause();
                }
            });
            assertEquals(Status.Code.NOT_FOUND, gone.getStatus().getCode());
            float[] want = new float[n];
            for (int i = 0; i < n; i++) {
                want[i] = 2f * i + 3f * i;
            }
            assertArrayEquals(want, await(s.readFloats(acc)));
        }
    }

    /** A padded buffer's whole padded array (halo included), read inline. */
    private static float[] wholeFloats(Session s, BufferHandle buffer) throws Exception {
        java.nio.ByteBuffer b = await(s.download(buffer, 0, 0, CommandOptions.defaults().wholePadded(true)).future()).data();
        float[] out = new float[b.remaining() / Float.BYTES];
        b.order(java.nio.ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(out);
        return out;
    }
}
