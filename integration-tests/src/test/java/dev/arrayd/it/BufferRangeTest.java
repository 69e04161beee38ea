package dev.arrayd.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.client.Access;
import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.ArraydCommandException;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.BufferRange;
import dev.arrayd.client.DType;
import dev.arrayd.client.Ir;
import dev.arrayd.client.IrExpr;
import dev.arrayd.client.IrKernelSpec;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import io.grpc.Status;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Byte ranges as launch arguments: a kernel sees a range of a byte buffer as an array of its parameter's dtype
 * (reads and writes land at the range's offset, the IR's bounds are the range's); misaligned, ragged and
 * out-of-buffer ranges are refused naming the value.
 */
class BufferRangeTest {

    /** y[i] = 2 * x[i] + 1 over i32. */
    static IrKernelSpec twice() {
        return Ir.kernel("twice")
                .buffer("x", DType.I32, Access.READ)
                .buffer("y", DType.I32, Access.WRITE)
                .body(b -> {
                    IrExpr i = b.let("i", Ir.globalId(0));
                    b.store("y", i, Ir.load("x", i).mul(Ir.i32(2)).add(Ir.i32(1)));
                });
    }

    @Test
    @Timeout(120)
    void aKernelReadsAndWritesRangesOfAByteBuffer() throws Exception {
        try (DaemonProcess d = new DaemonProcess("--metrics-port", "-1");
                ArraydClient c = ArraydClient.connect(d.target());
                Session s = c.openSession("it-ranges").get(60, TimeUnit.SECONDS)) {
            long align = c.devices().get(60, TimeUnit.SECONDS).getFirst().baseAlignmentBytes();
            int n = 64;
            long outAt = align + (4L * n + align - 1) / align * align; // after the input, aligned
            long end = outAt + 4L * n;
            BufferHandle raw = s.createBuffer(DType.U8, end).get(60, TimeUnit.SECONDS);
            ByteBuffer in = ByteBuffer.allocate(4 * n).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < n; i++) {
                in.putInt(i - 7);
            }
            in.flip();
            s.upload(raw, align, in, dev.arrayd.client.CommandOptions.defaults());
            KernelHandle k = s.compile(KernelModuleSpec.ir(twice())).get(60, TimeUnit.SECONDS).get("twice");
            s.launch(Launch.of(k).global(n).args(new BufferRange(raw, align, 4L * n), new BufferRange(raw, outAt, 4L * n)))
                    .future().get(60, TimeUnit.SECONDS);
            ByteBuffer out = s.read(raw, outAt, 4L * n).get(60, TimeUnit.SECONDS).order(ByteOrder.LITTLE_ENDIAN);
            int[] got = new int[n];
            int[] want = new int[n];
            for (int i = 0; i < n; i++) {
                got[i] = out.getInt(4 * i);
                want[i] = 2 * (i - 7) + 1;
            }
            assertArrayEquals(want, got);

            // the range is the kernel's array: a grid past its elements fails the IR's bounds check
            assertRefused(s, Launch.of(k).global(2L * n).args(new BufferRange(raw, align, 4L * n),
                    new BufferRange(raw, align, 4L * n)), Status.Code.OUT_OF_RANGE, "");
            if (align > 4) {
                assertRefused(s, Launch.of(k).global(n).args(new BufferRange(raw, 4, 4L * n), new BufferRange(raw,
                        outAt, 4L * n)), Status.Code.INVALID_ARGUMENT, "range.offset_bytes: 4");
            }
            assertRefused(s, Launch.of(k).global(n).args(new BufferRange(raw, align, 4L * n - 2),
                    new BufferRange(raw, outAt, 4L * n)), Status.Code.INVALID_ARGUMENT, "range.size_bytes: " + (4 * n - 2));
            assertRefused(s, Launch.of(k).global(n).args(new BufferRange(raw, align, 4L * n),
                    new BufferRange(raw, outAt, 8L * n)), Status.Code.OUT_OF_RANGE, "range [" + outAt);
        }
    }

    private static void assertRefused(Session s, Launch l, Status.Code code, String text) throws Exception {
        var e = assertThrows(ExecutionException.class, () -> s.launch(l).future().get(60, TimeUnit.SECONDS));
        ArraydCommandException ace = (ArraydCommandException) e.getCause();
        assertEquals(code, ace.code(), ace.getMessage());
        assertTrue(ace.getMessage().contains(text), ace.getMessage());
    }
}
