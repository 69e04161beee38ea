package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.support.CommandFuture;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Devices of one cpu backend share the process's memory: a PeerCopy is a memcpy between their slabs. */
class CpuPeerCopyTest {

    private static final long BYTES = 4096;

    private CpuBackend backend;
    private Device cpu0;
    private Device cpu1;
    private NativeStream on1;
    private Arena arena;

    @BeforeEach
    void open() {
        // no compiling here: memory and copies work even where gcc is missing
        backend = new CpuBackend(CpuOptions.defaults().withDeviceMemoryBytes(1 << 20));
        List<Device> devices = backend.openDevices(2);
        cpu0 = devices.get(0);
        cpu1 = devices.get(1);
        cpu0.allocPool(1, BYTES, 64);
        cpu1.allocPool(2, BYTES, 64);
        on1 = cpu1.newStream("peer");
        arena = Arena.ofShared();
    }

    @AfterEach
    void close() {
        on1.close();
        backend.close();
        arena.close();
        assertEquals(0, ((CpuDevice) cpu0).usedBytes());
        assertEquals(0, ((CpuDevice) cpu1).usedBytes());
    }

    @Test
    void siblingsCanCopyFromEachOtherButNotFromThemselvesOrStrangers() {
        assertTrue(cpu1.canCopyFrom(cpu0));
        assertTrue(cpu0.canCopyFrom(cpu1));
        assertFalse(cpu0.canCopyFrom(cpu0), "a copy within one device is a Copy, not a PeerCopy");
        assertFalse(cpu0.canCopyFrom(null));
        try (CpuBackend other = new CpuBackend(CpuOptions.defaults().withDeviceMemoryBytes(1 << 20))) {
            Device stranger = other.openDevices(1).getFirst();
            assertFalse(cpu0.canCopyFrom(stranger), "another backend's slabs are freed on its own schedule");
            assertFalse(stranger.canCopyFrom(cpu0));
        }
    }

    @Test
    void peerCopyMovesTheBytesIntoTheDestinationDevice() throws Exception {
        MemorySegment in = arena.allocate(BYTES);
        for (long i = 0; i < BYTES / 4; i++) {
            in.setAtIndex(ValueLayout.JAVA_INT, i, (int) (i * 2654435761L));
        }
        MemRef src = new MemRef(1, 512, 1024);
        MemRef dst = new MemRef(2, 2048, 1024);
        NativeStream on0 = cpu0.newStream("upload");
        try {
            run(on0, new DeviceCommand.Upload(in.asSlice(512, 1024), src));
        } finally {
            on0.close();
        }
        run(on1, new DeviceCommand.PeerCopy(cpu0, src, dst));
        MemorySegment out = arena.allocate(BYTES);
        run(on1, new DeviceCommand.Download(new MemRef(2, 0, BYTES), out));
        byte[] expected = new byte[(int) BYTES];
        MemorySegment.copy(in, 512, MemorySegment.ofArray(expected), 2048, 1024);
        assertArrayEquals(expected, out.toArray(ValueLayout.JAVA_BYTE), "only dst changed, with src's bytes");
    }

    @Test
    void aSourceRefNotOnTheSourceDeviceIsRefusedNamingIt() {
        ArraydException missing = assertThrows(ArraydException.class,
                () -> run(on1, new DeviceCommand.PeerCopy(cpu0, new MemRef(2, 0, 64), new MemRef(2, 0, 64))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, missing.code());
        assertTrue(missing.getMessage().contains("src: pool2+0[64]") && missing.getMessage().contains("cpu:0"),
                missing::getMessage);

        ArraydException past = assertThrows(ArraydException.class,
                () -> run(on1, new DeviceCommand.PeerCopy(cpu0, new MemRef(1, BYTES - 32, 64), new MemRef(2, 0, 64))));
        assertEquals(ErrorCode.OUT_OF_RANGE, past.code());
        assertTrue(past.getMessage().contains("src: pool1+4064[64]") && past.getMessage().contains("cpu:0"),
                past::getMessage);
    }

    @Test
    void aBadDestinationOrSizeMismatchIsRefusedNamingIt() {
        ArraydException dst = assertThrows(ArraydException.class,
                () -> run(on1, new DeviceCommand.PeerCopy(cpu0, new MemRef(1, 0, 64), new MemRef(1, 0, 64))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, dst.code());
        assertTrue(dst.getMessage().contains("dst: pool1+0[64]") && dst.getMessage().contains("cpu:1"), dst::getMessage);

        ArraydException size = assertThrows(ArraydException.class,
                () -> run(on1, new DeviceCommand.PeerCopy(cpu0, new MemRef(1, 0, 64), new MemRef(2, 0, 128))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, size.code());
        assertTrue(size.getMessage().contains("pool2+0[128]") && size.getMessage().contains("64"), size::getMessage);
    }

    @Test
    void aSourceDeviceThatIsNotASiblingIsRefusedNamingIt() {
        ArraydException self = assertThrows(ArraydException.class,
                () -> run(on1, new DeviceCommand.PeerCopy(cpu1, new MemRef(2, 0, 64), new MemRef(2, 64, 64))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, self.code());
        assertTrue(self.getMessage().contains("srcDevice: cpu:1"), self::getMessage);
        try (CpuBackend other = new CpuBackend(CpuOptions.defaults().withDeviceMemoryBytes(1 << 20))) {
            Device stranger = other.openDevices(1).getFirst();
            stranger.allocPool(1, BYTES, 64);
            ArraydException e = assertThrows(ArraydException.class,
                    () -> run(on1, new DeviceCommand.PeerCopy(stranger, new MemRef(1, 0, 64), new MemRef(2, 0, 64))));
            assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
            assertTrue(e.getMessage().contains("srcDevice: cpu:0") && e.getMessage().contains("same backend"), e::getMessage);
        }
    }

    private static void run(NativeStream stream, DeviceCommand command) throws Exception {
        CommandFuture done = new CommandFuture();
        stream.submit(command, done);
        try {
            done.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw (Exception) e.getCause();
        }
    }
}
