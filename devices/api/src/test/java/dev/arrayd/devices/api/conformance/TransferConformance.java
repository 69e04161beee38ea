package dev.arrayd.devices.api.conformance;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Set;
import org.junit.jupiter.api.Test;

import static dev.arrayd.devices.api.conformance.Conformance.run;
import static dev.arrayd.devices.api.conformance.Conformance.runExpectingFailure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Moving bytes: uploads, downloads, copies within and between slabs, fills of every pattern width, and
 * sequences of them as one command (a padded array's interior, row by row).
 */
public interface TransferConformance extends ConformanceFixture {

    @Test
    default void uploadDownloadRoundTripAtOffsets() {
        NativeStream stream = device().newStream("s");
        slab(1, 1 << 16);
        long[][] cases = {{0, 1}, {0, 4096}, {64, 1000}, {3, 17}, {4104, 8192}, {(1 << 16) - 8, 8}};
        int seed = 10;
        for (long[] c : cases) {
            MemRef ref = new MemRef(1, c[0], c[1]);
            MemorySegment data = randomBytes(c[1], seed++);
            upload(stream, ref, data);
            assertEquals(-1, download(stream, ref).mismatch(data), () -> "round trip at " + ref);
        }
        ArraydException beyond = runExpectingFailure(stream,
                new DeviceCommand.Upload(host(16), new MemRef(1, (1 << 16) - 8, 16)));
        assertTrue(Set.of(ErrorCode.OUT_OF_RANGE, ErrorCode.INVALID_ARGUMENT).contains(beyond.code()), beyond::toString);
        stream.close();
    }

    @Test
    default void copyWithinAndBetweenSlabs() {
        NativeStream stream = device().newStream("s");
        slab(1, 8192);
        slab(2, 8192);
        MemorySegment data = randomBytes(3000, 3);
        upload(stream, new MemRef(1, 0, 3000), data);
        run(stream, new DeviceCommand.Copy(new MemRef(1, 0, 3000), new MemRef(2, 128, 3000)));
        run(stream, new DeviceCommand.Copy(new MemRef(2, 128, 3000), new MemRef(1, 4096, 3000)));
        assertEquals(-1, download(stream, new MemRef(2, 128, 3000)).mismatch(data));
        assertEquals(-1, download(stream, new MemRef(1, 4096, 3000)).mismatch(data));
        stream.close();
    }

    @Test
    default void aSequenceRunsItsPartsInOrderAsOneCommand() {
        NativeStream stream = device().newStream("s");
        MemRef all = slab(1, 4096);
        device().memsetZero(all);
        MemorySegment data = randomBytes(300, 21);
        // three rows of 100 bytes, 200 bytes apart; then a fill over part of the second row, after its upload
        java.util.List<DeviceCommand> parts = new java.util.ArrayList<>();
        for (int r = 0; r < 3; r++) {
            parts.add(new DeviceCommand.Upload(data.asSlice(r * 100L, 100), new MemRef(1, 64 + r * 300L, 100)));
        }
        parts.add(new DeviceCommand.Fill(new MemRef(1, 364 + 10, 20), 0x7f, 1));
        parts.add(new DeviceCommand.Copy(new MemRef(1, 64, 100), new MemRef(1, 2048, 100)));
        run(stream, new DeviceCommand.Sequence(parts));
        MemorySegment back = download(stream, all);
        for (int r = 0; r < 3; r++) {
            for (int i = 0; i < 100; i++) {
                byte expected = r == 1 && i >= 10 && i < 30 ? 0x7f : data.get(ValueLayout.JAVA_BYTE, r * 100L + i);
                assertEquals(expected, back.get(ValueLayout.JAVA_BYTE, 64 + r * 300L + i), "row " + r + ", byte " + i);
            }
            assertEquals(0, back.get(ValueLayout.JAVA_BYTE, 64 + r * 300L + 100), "between the rows");
        }
        assertEquals(-1, back.asSlice(2048, 100).mismatch(data.asSlice(0, 100)), "the copy read the first row");
        MemorySegment rows = host(200);
        run(stream, new DeviceCommand.Sequence(java.util.List.of(
                new DeviceCommand.Download(new MemRef(1, 64, 100), rows.asSlice(0, 100)),
                new DeviceCommand.Download(new MemRef(1, 664, 100), rows.asSlice(100, 100)))));
        assertEquals(-1, rows.asSlice(0, 100).mismatch(data.asSlice(0, 100)));
        assertEquals(-1, rows.asSlice(100, 100).mismatch(data.asSlice(200, 100)));
        ArraydException outside = runExpectingFailure(stream, new DeviceCommand.Sequence(java.util.List.of(
                new DeviceCommand.Fill(new MemRef(1, 0, 8), 1, 1), new DeviceCommand.Fill(new MemRef(1, 4090, 16), 1, 1))));
        assertTrue(Set.of(ErrorCode.OUT_OF_RANGE, ErrorCode.INVALID_ARGUMENT).contains(outside.code()), outside::toString);
        stream.close();
    }

    @Test
    default void fillWithEveryPatternWidth() {
        NativeStream stream = device().newStream("s");
        MemRef all = slab(1, 4096);
        long pattern = 0x0807060504030201L;
        for (int width : new int[] {1, 2, 4, 8}) {
            device().memsetZero(all);
            MemRef target = new MemRef(1, 64, 1000);
            run(stream, new DeviceCommand.Fill(target, pattern, width));
            MemorySegment back = download(stream, all);
            for (long i = 0; i < 4096; i++) {
                boolean inside = i >= target.offset() && i < target.offset() + target.bytes();
                byte expected = inside ? (byte) (1 + (i - target.offset()) % width) : 0;
                assertEquals(expected, back.get(ValueLayout.JAVA_BYTE, i), "width " + width + ", byte " + i);
            }
        }
        stream.close();
    }
}
