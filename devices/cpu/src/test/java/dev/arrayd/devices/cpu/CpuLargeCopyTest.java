package dev.arrayd.devices.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.conformance.Conformance;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Large uploads, downloads and copies are split across the device's threads ({@link ChunkedCopy}); an
 * overlapping copy is not (it keeps memmove's meaning); host memory mapped in place is copied onto itself
 * not at all.
 */
class CpuLargeCopyTest {

    /** Over {@link ChunkedCopy#SPLIT_BYTES}, and not a whole number of chunks. */
    private static final long BIG = (20L << 20) + 12;

    private CpuBackend backend;
    private Device cpu;
    private NativeStream stream;
    private Arena arena;

    @BeforeEach
    void open() {
        backend = new CpuBackend(CpuOptions.defaults().withDeviceMemoryBytes(64L << 20).withDeviceThreads(3));
        cpu = backend.openDevices(1).getFirst();
        cpu.allocPool(1, 48L << 20, 64);
        stream = cpu.newStream("copies");
        arena = Arena.ofShared();
    }

    @AfterEach
    void close() {
        stream.close();
        backend.close();
        arena.close();
    }

    private MemorySegment pattern(long bytes, int seed) {
        MemorySegment m = arena.allocate(bytes, 64);
        for (long i = 0; i < bytes; i++) {
            m.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + seed + (i >>> 20)));
        }
        return m;
    }

    @Test
    void aLargeUploadDownloadAndCopyKeepEveryByteInPlace() throws Exception {
        MemorySegment in = pattern(BIG, 7);
        run(new DeviceCommand.Upload(in, new MemRef(1, 64, BIG)));
        MemorySegment out = arena.allocate(BIG, 64);
        run(new DeviceCommand.Download(new MemRef(1, 64, BIG), out));
        assertEquals(-1, out.mismatch(in), "download of the upload");
        run(new DeviceCommand.Copy(new MemRef(1, 64, BIG), new MemRef(1, 24L << 20, BIG)));
        MemorySegment copied = arena.allocate(BIG, 64);
        run(new DeviceCommand.Download(new MemRef(1, 24L << 20, BIG), copied));
        assertEquals(-1, copied.mismatch(in), "copy within the device");
    }

    @Test
    void anOverlappingCopyMovesLikeMemmove() throws Exception {
        MemorySegment in = pattern(BIG, 3);
        run(new DeviceCommand.Upload(in, new MemRef(1, 0, BIG)));
        long shift = 1L << 20;
        run(new DeviceCommand.Copy(new MemRef(1, 0, BIG), new MemRef(1, shift, BIG)));
        MemorySegment out = arena.allocate(BIG, 64);
        run(new DeviceCommand.Download(new MemRef(1, shift, BIG), out));
        assertEquals(-1, out.mismatch(in), "the source as it was before the copy, not a smeared one");
    }

    @Test
    void hostMemoryMappedInPlaceIsNotCopiedOntoItself() throws Exception {
        MemorySegment host = pattern(BIG, 11);
        MemRef mapped = cpu.mapHost(host);
        assertTrue(mapped.poolId() < 0, mapped.toString());
        assertEquals(BIG, mapped.bytes());
        run(new DeviceCommand.Upload(host, mapped));
        run(new DeviceCommand.Download(mapped, host));
        assertEquals(-1, host.mismatch(pattern(BIG, 11)));
        MemorySegment out = arena.allocate(BIG, 64);
        run(new DeviceCommand.Download(mapped, out));
        assertEquals(-1, out.mismatch(host), "readable through the mapping like a slab");
        cpu.unmapHost(mapped);
        ArraydException gone = Conformance.runExpectingFailure(stream, new DeviceCommand.Download(mapped, out));
        assertTrue(gone.getMessage().contains("is not allocated"), gone.getMessage());
    }

    private void run(DeviceCommand command) {
        Conformance.run(stream, command);
    }
}
