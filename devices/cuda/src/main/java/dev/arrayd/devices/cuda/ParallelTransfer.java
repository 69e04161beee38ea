package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

/**
 * A large upload or download on several threads at once. One thread copies ordinary host memory into or
 * out of pinned staging at about a sixth of what a PCIe 5 link moves, so a transfer of many chunks is
 * cut into lanes: lane {@code j} takes chunks {@code j, j + L, j + 2L, ...} with two staging buffers of
 * its own, copies each on its thread and queues its DMA on the stream, alternating its buffers so that
 * its next host copy overlaps its last DMA. The stream's worker runs lane 0, the device's
 * {@link CopyLanes} the others; the transfer is done when every lane is.
 *
 * <p><b>No waits on other work.</b> Before the lanes start, the worker waits until the stream has run
 * everything queued before the transfer (cross-stream waits included). A lane then waits only for DMAs
 * of its own transfer on an otherwise idle stream, which always finish, so lanes borrowed from the
 * shared pool can never be held by work that needs the pool itself.
 */
final class ParallelTransfer {

    /** Fewer chunks than this stay on the worker: the hand-offs would cost more than the lanes bring. */
    static final int MIN_CHUNKS = 8;

    private ParallelTransfer() {}

    /**
     * The pieces of a parallel transfer: an upload copies half a staging buffer at a time (on an H200 host, 8
     * lanes upload 44 GB/s in 2 MiB pieces and 31 GB/s in 4 MiB ones: the pieces in flight then stay in the
     * CPU's cache for the DMA to read), a download whole buffers (45 GB/s in 4 MiB pieces, 33 GB/s in 2 MiB).
     */
    static ChunkPlan plan(ChunkPlan serial, boolean upload) {
        return upload ? new ChunkPlan(serial.totalBytes(), Math.max(4096, serial.chunkBytes() / 2)) : serial;
    }

    /**
     * Lanes for a transfer of {@code plan} on a device with {@code copyLanes} lanes and {@code stagingBuffers}
     * pinned buffers: at most half the buffers (two per lane), at least two chunks per lane; 1 means serial.
     */
    static int lanes(ChunkPlan plan, int copyLanes, int stagingBuffers) {
        if (plan.count() < MIN_CHUNKS) {
            return 1;
        }
        return Math.max(1, Math.min(copyLanes, Math.min(stagingBuffers / 4, plan.count() / 2)));
    }

    /** Direction and endpoints of one transfer. */
    record Job(CudaDevice device, CUstream stream, ChunkPlan plan, StagingPool.Buffer[] buffers, CUevent[] events,
               MemorySegment host, CUdeviceptr deviceBase, boolean upload, String what) {

        int lanes() {
            return buffers.length / 2;
        }
    }

    /** Runs {@code job}: lanes 1.. on {@code pool}, lane 0 here; returns when all are done, throwing the first failure. */
    static void run(Job job, CopyLanes pool) {
        CudaErrors.check(JCudaDriver.cuStreamSynchronize(job.stream()), job.what());
        List<Future<?>> others = new ArrayList<>(job.lanes() - 1);
        RuntimeException first = null;
        try {
            for (int j = 1; j < job.lanes(); j++) {
                int lane = j;
                others.add(pool.submit(() -> {
                    job.device().makeCurrent();
                    lane(job, lane);
                }));
            }
            lane(job, 0);
        } catch (RuntimeException e) {
            first = e;
        }
        for (Future<?> f : others) {
            try {
                joinUninterruptibly(f);
            } catch (ExecutionException e) {
                if (first == null) {
                    first = e.getCause() instanceof RuntimeException r ? r
                            : new ArraydException(ErrorCode.INTERNAL, job.what() + ": a copy lane failed: " + e.getCause(), e.getCause());
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** Waits for a lane even when interrupted (its buffers are in use until it ends), keeping the interrupt. */
    private static void joinUninterruptibly(Future<?> f) throws ExecutionException {
        boolean interrupted = false;
        try {
            for (;;) {
                try {
                    f.get();
                    return;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void lane(Job job, int lane) {
        if (job.upload()) {
            uploadLane(job, lane);
        } else {
            downloadLane(job, lane);
        }
    }

    /** Chunks lane, lane + L, ...: wait until the buffer's DMA of two chunks ago is done, fill it, queue its DMA. */
    private static void uploadLane(Job job, int lane) {
        ChunkPlan plan = job.plan();
        int step = job.lanes();
        int k = 0;
        for (int i = lane; i < plan.count(); i += step, k++) {
            int b = 2 * lane + (k & 1);
            if (k >= 2) {
                CudaErrors.check(JCudaDriver.cuEventSynchronize(job.events()[b]), job.what());
            }
            MemorySegment.copy(job.host(), plan.offset(i), job.buffers()[b].segment(), 0, plan.length(i));
            CudaErrors.check(JCudaDriver.cuMemcpyHtoDAsync(job.deviceBase().withByteOffset(plan.offset(i)),
                    job.buffers()[b].host(), plan.length(i), job.stream()), job.what());
            CudaErrors.check(JCudaDriver.cuEventRecord(job.events()[b], job.stream()), job.what());
        }
    }

    /** Chunks lane, lane + L, ...: the next chunk's DMA is queued before this one is copied out, so they overlap. */
    private static void downloadLane(Job job, int lane) {
        ChunkPlan plan = job.plan();
        int step = job.lanes();
        if (lane < plan.count()) {
            queueDownload(job, lane, 2 * lane);
        }
        int k = 0;
        for (int i = lane; i < plan.count(); i += step, k++) {
            int b = 2 * lane + (k & 1);
            if (i + step < plan.count()) {
                queueDownload(job, i + step, 2 * lane + ((k + 1) & 1));
            }
            CudaErrors.check(JCudaDriver.cuEventSynchronize(job.events()[b]), job.what());
            MemorySegment.copy(job.buffers()[b].segment(), 0, job.host(), plan.offset(i), plan.length(i));
        }
    }

    private static void queueDownload(Job job, int chunk, int buffer) {
        ChunkPlan plan = job.plan();
        CudaErrors.check(JCudaDriver.cuMemcpyDtoHAsync(job.buffers()[buffer].host(),
                job.deviceBase().withByteOffset(plan.offset(chunk)), plan.length(chunk), job.stream()), job.what());
        CudaErrors.check(JCudaDriver.cuEventRecord(job.events()[buffer], job.stream()), job.what());
    }
}
