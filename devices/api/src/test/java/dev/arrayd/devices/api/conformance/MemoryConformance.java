package dev.arrayd.devices.api.conformance;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Set;
import org.junit.jupiter.api.Test;

import static dev.arrayd.devices.api.conformance.Conformance.F32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Device description and memory: slabs by pool id, capacity, zeroing. */
public interface MemoryConformance extends ConformanceFixture {

    @Test
    default void deviceInfoIsSane() {
        DeviceInfo info = device().info();
        assertEquals(new DeviceId(backend().name(), 0), device().id());
        assertEquals(device().id(), info.id());
        assertFalse(info.name().isBlank(), "name");
        assertTrue(info.memoryBytes() > 0, () -> "memoryBytes " + info.memoryBytes());
        assertTrue(info.computeUnits() > 0, () -> "computeUnits " + info.computeUnits());
        assertTrue(info.maxWorkGroupSize() > 0, "maxWorkGroupSize");
        assertTrue(info.maxGridDims() >= 1 && info.maxGridDims() <= 3, () -> "maxGridDims " + info.maxGridDims());
        assertTrue(info.maxWorkItemSizes().size() >= info.maxGridDims(), "maxWorkItemSizes per grid dim");
        assertTrue(info.suggestedStreams() >= 1, "suggestedStreams");
        assertTrue(info.dtypes().contains(DType.F32), "dtypes include f32");
        assertTrue(info.dialects().contains(kernelSource("vadd").dialect()), "dialects include the canned kernels' dialect");
        assertTrue(backend().compiler().dialects().contains(kernelSource("vadd").dialect()), "compiler dialects");
    }

    @Test
    default void allocAndFreePools() {
        device().allocPool(1, 4096, 64);
        device().allocPool(2, 1 << 20, 4096);
        ArraydException taken = assertThrows(ArraydException.class, () -> device().allocPool(1, 64, 64));
        assertEquals(ErrorCode.ALREADY_EXISTS, taken.code(), taken::toString);
        assertTrue(taken.getMessage().contains("1"), taken::getMessage);
        device().freePool(1);
        device().freePool(1); // unknown ids are ignored
        device().freePool(12345);
        device().allocPool(1, 128, 64);
        NativeStream stream = device().newStream("s");
        MemRef ref = new MemRef(2, 4096, 256);
        MemorySegment data = randomBytes(256, 1);
        upload(stream, ref, data);
        assertEquals(-1, download(stream, ref).mismatch(data));
        device().freePool(2);
        device().freePool(1);
        stream.close();
    }

    @Test
    default void allocBeyondCapacityIsResourceExhausted() {
        long capacity = device().info().memoryBytes();
        ArraydException tooBig = assertThrows(ArraydException.class, () -> device().allocPool(1, capacity + 1, 64));
        assertEquals(ErrorCode.RESOURCE_EXHAUSTED, tooBig.code(), tooBig::toString);
        assertTrue(tooBig.getMessage().contains(device().id().toString()), () -> "names the device: " + tooBig.getMessage());
        assertTrue(tooBig.getMessage().contains(Long.toString(capacity + 1)), () -> "names the bytes: " + tooBig.getMessage());

        device().allocPool(2, 1 << 20, 64);
        ArraydException noRoom = assertThrows(ArraydException.class, () -> device().allocPool(3, capacity, 64));
        assertEquals(ErrorCode.RESOURCE_EXHAUSTED, noRoom.code(), noRoom::toString);
        device().freePool(2);
    }

    @Test
    default void memsetZeroClearsExactlyTheRange() {
        NativeStream stream = device().newStream("s");
        MemRef all = slab(1, 1024);
        MemorySegment data = randomBytes(1024, 2);
        data.fill((byte) 0x5a);
        upload(stream, all, data);
        device().memsetZero(all.slice(100, 200));
        MemorySegment back = download(stream, all);
        for (int i = 0; i < 1024; i++) {
            byte expected = i >= 100 && i < 300 ? 0 : (byte) 0x5a;
            assertEquals(expected, back.get(ValueLayout.JAVA_BYTE, i), "byte " + i);
        }
        ArraydException outside = assertThrows(ArraydException.class, () -> device().memsetZero(new MemRef(1, 1000, 100)));
        assertTrue(Set.of(ErrorCode.OUT_OF_RANGE, ErrorCode.INVALID_ARGUMENT).contains(outside.code()), outside::toString);
        stream.close();
    }
}
