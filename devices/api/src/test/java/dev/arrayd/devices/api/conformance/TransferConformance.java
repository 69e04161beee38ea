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

/** Moving bytes: uploads, downloads, copies within and between slabs, fills of every pattern width. */
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
