package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.client.Access;
import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.ArraydCommandException;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.DType;
import dev.arrayd.client.Ir;
import dev.arrayd.client.IrExpr;
import dev.arrayd.client.IrKernelSpec;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * IR kernels through the real daemon with native source disabled: built with the client's builder,
 * sent in KernelModuleSource.ir, validated, rendered, run; an out-of-bounds kernel fails with
 * OUT_OF_RANGE and another session's data stays intact.
 */
class IrKernelsEndToEndTest {

    static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(60, TimeUnit.SECONDS);
    }

    static final IrKernelSpec SAXPY = Ir.kernel("saxpy")
            .scalar("a", DType.F32)
            .buffer("x", DType.F32, Access.READ, Ir.param("n"))
            .buffer("y", DType.F32, Access.READ_WRITE, Ir.param("n"))
            .scalar("n", DType.I64, 0, 1L << 40)
            .body(b -> {
                IrExpr i = b.let("i", Ir.globalId(0));
                b.when(i.lt(Ir.param("n")), then ->
                        then.store("y", i, Ir.param("a").mul(Ir.load("x", i)).add(Ir.load("y", i))));
            });

    /** Writes out[i + shift] with no declared extent: guarded, and out of range for shift > 0. */
    static final IrKernelSpec SHIFTED = Ir.kernel("shifted")
            .buffer("out", DType.I32, Access.WRITE)
            .scalar("shift", DType.I64)
            .body(b -> b.store("out", Ir.globalId(0).add(Ir.param("shift")), Ir.i32(7)));

    @Test
    void irRunsWithoutNativeSourceAndOutOfBoundsIsOutOfRange() throws Exception {
        ServerOptions options = ServerOptions.defaults().withPort(0).withAllowNativeSource(false)
                .withCpuMemoryBytes(256L << 20);
        int n = 1000;
        try (ArraydServer server = ArraydServer.start(options);
                ArraydClient c = ArraydClient.connect("127.0.0.1:" + server.port());
                Session victim = await(c.openSession("victim"));
                Session s = await(c.openSession("ir-test"))) {
            BufferHandle secret = await(victim.createBuffer(DType.I32, 256));
            int[] secretData = new int[256];
            java.util.Arrays.fill(secretData, 42);
            victim.write(secret, secretData);

            var kernels = await(s.compile(KernelModuleSpec.ir(SAXPY, SHIFTED)));
            KernelHandle saxpy = kernels.get("saxpy");
            BufferHandle x = await(s.createBuffer(DType.F32, n));
            BufferHandle y = await(s.createBuffer(DType.F32, n));
            float[] xs = new float[n];
            float[] ys = new float[n];
            float[] want = new float[n];
            for (int i = 0; i < n; i++) {
                xs[i] = i;
                ys[i] = 1;
                want[i] = 2f * i + 1;
            }
            s.write(x, xs);
            s.write(y, ys);
            s.launch(Launch.of(saxpy).global(1024).args(2f, x, y, (long) n));
            assertArrayEquals(want, await(s.readFloats(y)));

            BufferHandle out = await(s.createBuffer(DType.I32, 64));
            var launch = s.launch(Launch.of(kernels.get("shifted")).global(64).args(out, 16L));
            ExecutionException e = assertThrows(ExecutionException.class, () -> launch.future().get(60, TimeUnit.SECONDS));
            ArraydCommandException failure = assertInstanceOf(ArraydCommandException.class, e.getCause());
            assertEquals(Status.Code.OUT_OF_RANGE, failure.code());
            String message = failure.status().getDescription();
            assertTrue(message.contains("kernel shifted") && message.contains("index 64 of buffer out"), message);
            assertArrayEquals(secretData, await(victim.readInts(secret)));
        }
    }

    /** out[r] = the sum of row r of a rows x cols matrix, in column order unless {@code relaxed}. */
    static IrKernelSpec rowSums(String name, boolean relaxed) {
        var k = Ir.kernel(name);
        if (relaxed) {
            k.relaxedMath();
        }
        return k.buffer("m", DType.F32, Access.READ, Ir.param("rows").mul(Ir.param("cols")))
                .buffer("out", DType.F32, Access.WRITE, Ir.param("rows"))
                .scalar("rows", DType.I64, 0, 1 << 20).scalar("cols", DType.I64, 0, 1 << 20)
                .body(b -> {
                    IrExpr r = b.let("r", Ir.globalId(0));
                    b.when(r.lt(Ir.param("rows")), t -> {
                        t.var("acc", Ir.f32(0));
                        t.loop("c", Ir.i64(0), Ir.param("cols"), (l, c) -> l.accumulate("acc",
                                dev.arrayd.client.IrBlock.Accumulate.ADD, Ir.load("m", r.mul(Ir.param("cols")).add(c))));
                        t.store("out", r, Ir.var("acc"));
                    });
                });
    }

    @Test
    void relaxedMathIsOptInAndKeepsSumsWithinRounding() throws Exception {
        IrKernelSpec strict = rowSums("strict_rows", false);
        IrKernelSpec relaxed = rowSums("relaxed_rows", true);
        assertTrue(relaxed.proto().getRelaxedMath() && !strict.proto().getRelaxedMath());
        int rows = 16;
        int cols = 4096;
        float[] m = new float[rows * cols];
        java.util.Random rnd = new java.util.Random(5);
        for (int i = 0; i < m.length; i++) {
            m[i] = (float) (rnd.nextGaussian() * Math.pow(10, rnd.nextInt(5) - 2));
        }
        try (ArraydServer server = ArraydServer.start(ServerOptions.defaults().withPort(0).withAllowNativeSource(false)
                        .withCpuMemoryBytes(64L << 20));
                ArraydClient c = ArraydClient.connect("127.0.0.1:" + server.port());
                Session s = await(c.openSession("relaxed"))) {
            var kernels = await(s.compile(KernelModuleSpec.ir(strict, relaxed)));
            BufferHandle in = await(s.createBuffer(DType.F32, m.length));
            BufferHandle outStrict = await(s.createBuffer(DType.F32, rows));
            BufferHandle outRelaxed = await(s.createBuffer(DType.F32, rows));
            s.write(in, m);
            s.launch(Launch.of(kernels.get("strict_rows")).global(rows).args(in, outStrict, (long) rows, (long) cols));
            s.launch(Launch.of(kernels.get("relaxed_rows")).global(rows).args(in, outRelaxed, (long) rows, (long) cols));
            float[] gotStrict = await(s.readFloats(outStrict));
            float[] gotRelaxed = await(s.readFloats(outRelaxed));
            for (int r = 0; r < rows; r++) {
                float inOrder = 0;
                double exact = 0;
                double magnitude = 0;
                for (int k = 0; k < cols; k++) {
                    inOrder += m[r * cols + k];
                    exact += m[r * cols + k];
                    magnitude += Math.abs(m[r * cols + k]);
                }
                assertEquals(inOrder, gotStrict[r], 0f, "strict row " + r);
                assertEquals(exact, gotRelaxed[r], cols * Math.ulp((float) magnitude), "relaxed row " + r);
            }
        }
    }

    @Test
    void illTypedIrIsInvalidArgumentNamingTheNode() throws Exception {
        IrKernelSpec bad = Ir.kernel("bad").buffer("o", DType.F32, Access.WRITE)
                .body(b -> b.store("o", Ir.f32(1), Ir.f32(2)));
        ServerOptions options = ServerOptions.defaults().withPort(0).withCpuMemoryBytes(64L << 20);
        try (ArraydServer server = ArraydServer.start(options);
                ArraydClient c = ArraydClient.connect("127.0.0.1:" + server.port());
                Session s = await(c.openSession("ir-bad"))) {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> s.compile(KernelModuleSpec.ir(bad)).get(60, TimeUnit.SECONDS));
            Status status = e.getCause() instanceof StatusRuntimeException sre ? sre.getStatus()
                    : Status.fromThrowable(e.getCause());
            assertEquals(Status.Code.INVALID_ARGUMENT, status.getCode(), status::toString);
            assertTrue(status.getDescription().contains("modules[0].ir.kernels[0].body[0].store.index: i32 or i64 expected, got f32"),
                    status::getDescription);
        }
    }
}
