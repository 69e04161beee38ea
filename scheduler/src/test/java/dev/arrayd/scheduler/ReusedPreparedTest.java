package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A single-command submission fills the scheduler's one reusable {@link Prepared} (and its buffer arrays)
 * instead of new ones: nothing of one submission may leak into the next, a rejected one included, and a
 * submission made while another holds it (from a completion listener) gets one of its own.
 */
class ReusedPreparedTest extends TwoDevicesSession {

    @Override
    String sessionName() {
        return "test";
    }

    private Buffer newBuf() {
        return sch.createBuffer(s, DType.I64, new long[] {4}, "", "");
    }

    private static CommandSpec launch(long event, CompiledKernel kernel, CommandSpec.Arg... args) {
        return new CommandSpec(event, null, 0, new CommandSpec.LaunchOp(kernel.handle(), new long[] {4}, null,
                List.of(args), ""));
    }

    private static CommandSpec.Arg buf(Buffer b) {
        return new CommandSpec.BufferArg(b.handle());
    }

    private static CommandSpec.Arg sc(long v) {
        return new CommandSpec.ScalarArg(KernelArg.Scalar.i64(v));
    }

    private Event submitOne(CommandSpec spec) {
        return sch.submit(s, List.of(spec), null).getFirst();
    }

    private long[] read(Buffer b, long event) throws Exception {
        Event e = submitOne(new CommandSpec(event, null, 0, new CommandSpec.DownloadOp(b.handle(), 0, 0, Long.MAX_VALUE)))
                .toFuture().get(10, TimeUnit.SECONDS);
        assertEquals(EventState.SUCCEEDED, e.state(), () -> String.valueOf(e.failure()));
        long[] out = new long[(int) (b.sizeBytes() / 8)];
        ByteBuffer.wrap((byte[]) e.result()).order(ByteOrder.nativeOrder()).asLongBuffer().get(out);
        return out;
    }

    @Test
    void consecutiveSingleSubmissionsKeepTheirOwnBuffersAcrossARejectedOne() throws Exception {
        Buffer a = newBuf();
        Buffer b = newBuf();
        submitOne(launch(1, k.get("set"), buf(a), sc(2)));           // a = 1 3 5 7
        submitOne(launch(2, k.get("set"), buf(b), sc(10)));          // b = 1 11 21 31
        submitOne(launch(3, k.get("mix"), buf(a), buf(a), sc(1)));   // one buffer passed twice: a = 4a + 1
        submitOne(launch(4, k.get("mix"), buf(a), buf(b), sc(0)));   // b = 3b + a
        ArraydException bad = assertThrows(ArraydException.class, () -> submitOne(launch(5, k.get("set"), buf(b),
                new CommandSpec.ScalarArg(KernelArg.Scalar.f32(1f)))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, bad.code());
        assertEquals("commands[0]: launch.args[1]: f32 scalar (expected: i64 scalar for parameter k)", bad.getMessage());
        assertThrows(ArraydException.class, () -> sch.event(s, 5), "nothing of a rejected submission is registered");
        submitOne(launch(5, k.get("mix"), buf(b), buf(a), sc(0)));   // a = 3a + b
        assertArrayEquals(new long[] {8, 46, 84, 122}, read(b, 6));
        assertArrayEquals(new long[] {23, 85, 147, 209}, read(a, 7));
    }

    @Test
    void aListenerMaySubmitWhileItsOwnSubmissionIsUnderWay() throws Exception {
        Buffer a = newBuf();
        CompletableFuture<Event> inner = new CompletableFuture<>();
        EventListener submitAnother = e -> {
            try {
                inner.complete(submitOne(launch(2, k.get("mix"), buf(a), buf(a), sc(1))));
            } catch (RuntimeException ex) {
                inner.completeExceptionally(ex);
            }
        };
        sch.submit(s, List.of(launch(1, k.get("set"), buf(a), sc(2))), submitAnother);
        Event second = inner.get(10, TimeUnit.SECONDS).toFuture().get(10, TimeUnit.SECONDS);
        assertEquals(EventState.SUCCEEDED, second.state(), () -> String.valueOf(second.failure()));
        assertArrayEquals(new long[] {5, 13, 21, 29}, read(a, 3));
    }
}
