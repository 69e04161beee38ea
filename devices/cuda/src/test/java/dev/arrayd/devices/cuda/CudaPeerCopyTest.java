package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Optional;

import static dev.arrayd.devices.api.conformance.Conformance.run;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * PeerCopy between CUDA devices of one backend, on the destination's stream: directly where peer access is
 * enabled, through pinned staging otherwise (forced here by clearing the peer table). Skipped, with the
 * reason, without a driver or a GPU; the copies need two GPUs.
 */
class CudaPeerCopyTest {

    /** Three staging chunks of the test's small buffers: the staged path alternates its two buffers. */
    private static final long BYTES = 3 * 4096 + 100;

    private CudaBackend backend;
    private List<Device> devices;
    private Arena arena;

    @BeforeEach
    void open() {
        backend = new CudaBackend(CudaOptions.defaults().withStaging(4096, 4));
        Optional<String> reason = backend.unavailableReason();
        Assumptions.assumeTrue(reason.isEmpty(), () -> "cuda backend unavailable: " + reason.orElse(""));
        devices = backend.openDevices(0);
        arena = Arena.ofShared();
    }

    @AfterEach
    void close() {
        backend.close();
        if (arena != null) {
            arena.close();
        }
    }

    private void assumeTwoDevices() {
        Assumptions.assumeTrue(devices.size() >= 2, () -> "peer copies need two CUDA devices; found " + devices.size());
    }

    @Test
    void siblingsCanCopyFromEachOtherButNotFromThemselvesOrStrangers() {
        Device first = devices.getFirst();
        assertFalse(first.canCopyFrom(first), "within one device it is a Copy");
        assertFalse(first.canCopyFrom(null));
        for (Device other : devices.subList(1, devices.size())) {
            assertTrue(first.canCopyFrom(other) && other.canCopyFrom(first), other.id().toString());
        }
        try (CudaBackend second = new CudaBackend()) {
            Device stranger = second.openDevices(1).getFirst();
            assertFalse(first.canCopyFrom(stranger), "another backend's devices are not peers");
        }
    }

    @Test
    void peerCopyMovesTheBytesDirectlyOrThroughStaging() {
        assumeTwoDevices();
        CudaDevice src = (CudaDevice) devices.get(0);
        CudaDevice dst = (CudaDevice) devices.get(1);
        src.allocPool(1, 2 * BYTES, 256);
        dst.allocPool(2, 2 * BYTES, 256);
        MemorySegment data = arena.allocate(BYTES, 64);
        for (long i = 0; i < BYTES; i++) {
            data.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
        }
        NativeStream onSrc = src.newStream("src");
        NativeStream onDst = dst.newStream("dst");
        try {
            run(onSrc, new DeviceCommand.Upload(data, new MemRef(1, 256, BYTES)));
            for (PeerAccess peers : List.of(dst.peers(), PeerAccess.NONE)) {
                dst.setPeers(peers); // NONE forces the staged path
                run(onDst, new DeviceCommand.Fill(new MemRef(2, 0, 2 * BYTES), 0, 1));
                run(onDst, new DeviceCommand.PeerCopy(src, new MemRef(1, 256, BYTES), new MemRef(2, 512, BYTES)));
                MemorySegment out = arena.allocate(BYTES, 64);
                run(onDst, new DeviceCommand.Download(new MemRef(2, 512, BYTES), out));
                assertArrayEquals(data.toArray(ValueLayout.JAVA_BYTE), out.toArray(ValueLayout.JAVA_BYTE),
                        CopyPath.forPeerCopy(0, 1, peers).toString());
            }
        } finally {
            onSrc.close();
            onDst.close();
        }
    }

    @Test
    void badRefsAndStrangersAreRefusedNamingThem() {
        assumeTwoDevices();
        CudaDevice src = (CudaDevice) devices.get(0);
        CudaDevice dst = (CudaDevice) devices.get(1);
        src.allocPool(1, 4096, 256);
        dst.allocPool(2, 4096, 256);
        NativeStream onDst = dst.newStream("dst");
        try {
            ArraydException missing = assertThrows(ArraydException.class,
                    () -> run(onDst, new DeviceCommand.PeerCopy(src, new MemRef(2, 0, 64), new MemRef(2, 0, 64))));
            assertEquals(ErrorCode.INVALID_ARGUMENT, missing.code());
            assertTrue(missing.getMessage().contains("src: pool2+0[64]") && missing.getMessage().contains("cuda:0"),
                    missing::getMessage);
            ArraydException past = assertThrows(ArraydException.class,
                    () -> run(onDst, new DeviceCommand.PeerCopy(src, new MemRef(1, 4064, 64), new MemRef(2, 0, 64))));
            assertEquals(ErrorCode.OUT_OF_RANGE, past.code());
            assertTrue(past.getMessage().contains("src: pool1+4064[64]"), past::getMessage);
            ArraydException self = assertThrows(ArraydException.class,
                    () -> run(onDst, new DeviceCommand.PeerCopy(dst, new MemRef(2, 0, 64), new MemRef(2, 64, 64))));
            assertEquals(ErrorCode.INVALID_ARGUMENT, self.code());
            assertTrue(self.getMessage().contains("srcDevice: cuda:1"), self::getMessage);
        } finally {
            onDst.close();
        }
    }
}
