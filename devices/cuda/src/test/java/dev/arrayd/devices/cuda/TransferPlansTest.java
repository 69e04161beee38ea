package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.ErrorCode;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Chunking of staged transfers, memset choice, copy path choice, device info and error codes. */
class TransferPlansTest {

    @Test
    void chunksCoverTheTransferExactly() {
        ChunkPlan p = new ChunkPlan(10_000, 4096);
        assertEquals(3, p.count());
        assertEquals(2, p.buffersNeeded());
        assertEquals(8192, p.offset(2));
        assertEquals(10_000 - 8192, p.length(2));
        assertEquals(1, new ChunkPlan(4096, 4096).count());
        assertEquals(1, new ChunkPlan(4096, 4096).buffersNeeded());
        assertEquals(0, new ChunkPlan(0, 4096).count());
        assertEquals(0, new ChunkPlan(0, 4096).buffersNeeded());
        long sum = 0;
        ChunkPlan big = new ChunkPlan((1L << 30) + 3, 4L << 20);
        for (int i = 0; i < big.count(); i++) {
            assertEquals(sum, big.offset(i));
            sum += big.length(i);
        }
        assertEquals((1L << 30) + 3, sum);
    }

    @Test
    void largeTransfersTakeLanesWithinHalfTheStagingAndTwoChunksEach() {
        long chunk = 4L << 20;
        assertEquals(1, ParallelTransfer.lanes(new ChunkPlan(7 * chunk, chunk), 8, 32), "too few chunks");
        assertEquals(4, ParallelTransfer.lanes(new ChunkPlan(8 * chunk, chunk), 8, 32), "two chunks per lane");
        assertEquals(8, ParallelTransfer.lanes(new ChunkPlan(64 * chunk, chunk), 8, 32));
        assertEquals(4, ParallelTransfer.lanes(new ChunkPlan(64 * chunk, chunk), 8, 16), "at most half of 16 buffers");
        assertEquals(1, ParallelTransfer.lanes(new ChunkPlan(64 * chunk, chunk), 1, 32), "one lane: serial");
        assertEquals(1, ParallelTransfer.lanes(new ChunkPlan(64 * chunk, chunk), 8, 4), "too little staging");
        ChunkPlan serial = new ChunkPlan(64 * chunk + 5, chunk);
        assertEquals(new ChunkPlan(64 * chunk + 5, chunk / 2), ParallelTransfer.plan(serial, true), "uploads in half buffers");
        assertEquals(serial, ParallelTransfer.plan(serial, false), "downloads in whole ones");
        assertEquals(4096, ParallelTransfer.plan(new ChunkPlan(1 << 20, 4096), true).chunkBytes(), "never below a page");
    }

    @Test
    void onlyCommandsThatCannotHoldTheCallerRunInline() {
        MemRef r = new MemRef(1, 0, 4096);
        MemRef big = new MemRef(1, 0, 8192);
        assertEquals(0, InlineLanes.stagingNeeded(new DeviceCommand.Copy(r, r), 4096));
        assertEquals(0, InlineLanes.stagingNeeded(new DeviceCommand.Fill(r, 7, 1), 4096));
        assertEquals(1, InlineLanes.stagingNeeded(new DeviceCommand.Fill(r, 7, 4), 4096), "may go through staging");
        assertEquals(1, InlineLanes.stagingNeeded(new DeviceCommand.Upload(MemorySegment.ofArray(new byte[4096]), r), 4096));
        assertEquals(-1, InlineLanes.stagingNeeded(new DeviceCommand.Upload(MemorySegment.ofArray(new byte[8192]), big), 4096));
        assertEquals(-1, InlineLanes.stagingNeeded(new DeviceCommand.Download(big, MemorySegment.ofArray(new byte[8192])), 4096));
        assertEquals(-1, InlineLanes.stagingNeeded(new DeviceCommand.Sequence(List.of(new DeviceCommand.Fill(r, 7, 1))), 4096));
        assertEquals(-1, InlineLanes.stagingNeeded(null, 4096));
    }

    @Test
    void fillPathFollowsAlignment() {
        assertEquals(FillPath.D8, FillPath.choose(1, 3, 0x11));
        assertEquals(FillPath.D16, FillPath.choose(2, 64, 0x1122));
        assertEquals(FillPath.STAGED, FillPath.choose(2, 65, 0x1122));
        assertEquals(FillPath.D32, FillPath.choose(4, 64, 1));
        assertEquals(FillPath.STAGED, FillPath.choose(4, 66, 1));
        assertEquals(FillPath.D2D32_PAIR, FillPath.choose(8, 64, 0x0807060504030201L));
        assertEquals(FillPath.D32, FillPath.choose(8, 64, 0x0403020104030201L));
        assertEquals(FillPath.STAGED, FillPath.choose(8, 66, 0x0807060504030201L));
        MemorySegment s = MemorySegment.ofArray(new byte[16]);
        FillPath.repeat(s, 0x0807060504030201L, 8);
        for (int i = 0; i < 16; i++) {
            assertEquals(1 + i % 8, s.get(ValueLayout.JAVA_BYTE, i));
        }
        FillPath.repeat(s, 0xbbaa, 2);
        assertEquals((byte) 0xaa, s.get(ValueLayout.JAVA_BYTE, 14));
        assertEquals((byte) 0xbb, s.get(ValueLayout.JAVA_BYTE, 15));
    }

    @Test
    void copyPathIsDeviceToDeviceThenPeerThenStaged() {
        assertEquals(CopyPath.DEVICE_TO_DEVICE, CopyPath.choose(0, 0, false));
        assertEquals(CopyPath.PEER, CopyPath.choose(0, 1, true));
        assertEquals(CopyPath.STAGED, CopyPath.choose(0, 1, false));
        PeerAccess peers = new PeerAccess(new boolean[][] {{false, true}, {false, false}});
        assertTrue(peers.enabled(0, 1));
        assertFalse(peers.enabled(1, 0));
        assertFalse(peers.enabled(5, 0));
        assertFalse(PeerAccess.NONE.enabled(0, 1));
    }

    @Test
    void aPeerCopyGoesDirectOnlyWhenTheDestinationMayReadTheSource() {
        // enabled[a][b]: a's context may access b's memory; only 1 -> 0 is enabled here
        PeerAccess peers = new PeerAccess(new boolean[][] {{false, false}, {true, false}});
        assertEquals(CopyPath.PEER, CopyPath.forPeerCopy(0, 1, peers), "on cuda:1's stream, reading cuda:0: allowed");
        assertEquals(CopyPath.STAGED, CopyPath.forPeerCopy(1, 0, peers), "on cuda:0's stream, reading cuda:1: not enabled");
        assertEquals(CopyPath.STAGED, CopyPath.forPeerCopy(0, 1, PeerAccess.NONE));
        assertEquals(CopyPath.STAGED, CopyPath.forPeerCopy(3, 7, peers), "devices past the table have no peer access");
        IllegalArgumentException same = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> CopyPath.forPeerCopy(2, 2, peers));
        assertTrue(same.getMessage().contains("cuda:2"), same::getMessage);
    }

    @Test
    void deviceInfoComesFromTheAttributes() {
        CudaDeviceFacts facts = new CudaDeviceFacts("NVIDIA H100 80GB HBM3", 9, 0, 85L << 30, 132, 1024, new int[] {1024, 1024, 64},
                new long[] {Integer.MAX_VALUE, 65535, 65535}, 48 * 1024, 3, true, false);
        DeviceInfo info = facts.info(new DeviceId("cuda", 0), true);
        assertEquals("NVIDIA H100 80GB HBM3 (sm_90)", info.name());
        assertEquals(85L << 30, info.memoryBytes());
        assertEquals(132, info.computeUnits());
        assertEquals(1024, info.maxWorkGroupSize());
        assertEquals(List.of(1024L, 1024L, 64L), info.maxWorkItemSizes());
        assertEquals(48 * 1024, info.localMemoryBytes());
        assertEquals(256, info.baseAlignment());
        assertEquals(4, info.suggestedStreams());
        assertFalse(info.unifiedMemory());
        assertEquals(Set.of(Dialect.CUDA_C, Dialect.PTX, Dialect.IR), info.dialects());
        assertTrue(info.dtypes().contains(DType.F64));
        assertEquals(3, info.maxGridDims());
        assertEquals("compute_90", facts.arch());
        assertEquals(Set.of(Dialect.PTX), facts.info(new DeviceId("cuda", 0), false).dialects());
        assertTrue(facts.describe().contains("compute capability 9.0, 132 SMs"), facts::describe);
    }

    @Test
    void cudaResultsMapToArraydCodes() {
        assertEquals(ErrorCode.RESOURCE_EXHAUSTED, CudaErrors.codeFor(CudaErrors.CUDA_ERROR_OUT_OF_MEMORY));
        assertEquals(ErrorCode.UNAVAILABLE, CudaErrors.codeFor(CudaErrors.CUDA_ERROR_NO_DEVICE));
        assertEquals(ErrorCode.INVALID_ARGUMENT, CudaErrors.codeFor(CudaErrors.CUDA_ERROR_INVALID_PTX));
        assertEquals(ErrorCode.INTERNAL, CudaErrors.codeFor(CudaErrors.CUDA_ERROR_ILLEGAL_ADDRESS));
        assertEquals(ErrorCode.INTERNAL, CudaErrors.codeFor(12345));
        assertEquals("cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2)", CudaErrors.message("cuMemAlloc", 2, "CUDA_ERROR_OUT_OF_MEMORY"));
    }
}
