package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.SlotRing;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Where a transfer through a client's ring may run: only on a stream the session created, on a device whose
 * streams copy host memory themselves (the test devices do not), within the buffer. The CPU device's side and
 * the client's are tested with the daemon (client-python's tests) and in SlotRingTest.
 */
class RingTransferRefusalTest extends TwoDevicesSession {

    private final Arena arena = Arena.ofShared();
    private final SlotRing ring = new SlotRing(arena.allocate(SlotRing.bytesFor(4096, 2), 64), 4096, 2,
            SlotRing.DEFAULT_STALL_NANOS);

    @Override
    String sessionName() {
        return "ring-refusals";
    }

    @AfterEach
    void closeArena() {
        arena.close();
    }

    private ArraydException refusal(long stream, CommandSpec.Op op) throws Exception {
        try {
            Event e = sch.submit(s, List.of(new CommandSpec(nextEvent++, null, stream, op)), null).getFirst().toFuture()
                    .get(10, TimeUnit.SECONDS);
            assertEquals(EventState.FAILED, e.state(), "refused");
            return (ArraydException) e.failure();
        } catch (ArraydException e) {
            return e;
        }
    }

    @Test
    void aRingTransferOnTheDefaultStreamIsRefused() throws Exception {
        Buffer b = sch.createBuffer(s, DType.I64, new long[] {1024}, "null:0", "");
        ArraydException e = refusal(0, new CommandSpec.RingOp(b.handle(), 0, 0, ring, false, false));
        assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().startsWith("commands[0]: download.into_ring: on the default stream (expected: a stream the session "
                + "created"), e.getMessage());
    }

    @Test
    void aRingTransferOnADeviceThatDoesNotCopyHostMemoryItselfIsRefusedNamingTheStream() throws Exception {
        Buffer b = sch.createBuffer(s, DType.I64, new long[] {1024}, "null:0", "");
        Stream st = sch.createStream(s, "null:0");
        ArraydException e = refusal(st.handle(), new CommandSpec.RingOp(b.handle(), 0, 8192, ring, true, false));
        assertEquals(ErrorCode.FAILED_PRECONDITION, e.code());
        assertTrue(e.getMessage().startsWith("commands[0]: upload.from_ring: " + st + " (expected: a stream of the session's own on a "
                + "device whose streams copy host memory themselves"), e.getMessage());
    }

    @Test
    void aRingTransferPastTheBufferOrOfPartElementsIsRefused() throws Exception {
        Buffer b = sch.createBuffer(s, DType.I64, new long[] {1024}, "null:0", "");
        long st = sch.createStream(s, "null:0").handle();
        ArraydException past = refusal(st, new CommandSpec.RingOp(b.handle(), 4096, 8192, ring, false, false));
        assertEquals(ErrorCode.OUT_OF_RANGE, past.code());
        assertTrue(past.getMessage().startsWith("commands[0]: download.into_ring: bytes [4096, +8192) (expected: within the 8192 bytes"),
                past.getMessage());
        ArraydException part = refusal(st, new CommandSpec.RingOp(b.handle(), 4, 8, ring, true, false));
        assertEquals(ErrorCode.INVALID_ARGUMENT, part.code());
        assertTrue(part.getMessage().startsWith("commands[0]: upload.from_ring: 8 bytes at offset 4 (expected: whole i64 elements"),
                part.getMessage());
    }
}
