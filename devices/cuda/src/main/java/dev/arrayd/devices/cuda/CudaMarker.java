package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.StreamMarker;
import jcuda.driver.CUevent;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A point in one CUDA stream that other streams (of any CUDA device) can wait for on the GPU, without
 * a host round trip: a {@code CUevent} recorded by the stream's worker when it reaches the marker's
 * place in its queue ({@link CudaStream#mark()}), waited on with {@code cuStreamWaitEvent} by another stream's worker before it enqueues
 * its command ({@link CudaStream#submitAfter}).
 *
 * <p>Why the future: the event only means something once recorded (CUDA treats waiting on a never
 * recorded event as already complete), and recording happens on the marking stream's worker thread
 * some time after {@code submit} returned; the waiting worker blocks until then (bounded).
 *
 * <p><b>Lifetime.</b> The marking stream retires the marker when the host hears that the marked point has
 * passed ({@link #retire}): the event is destroyed then, and a wait enqueued later is skipped (there is
 * nothing left to wait for). Retiring and enqueueing a wait are serialised on
 * the marker, so a wait never names a destroyed event; a wait already enqueued keeps the event alive in
 * the driver until it completes.
 */
final class CudaMarker implements StreamMarker {

    private static final int CU_EVENT_DISABLE_TIMING = 2;

    private final CompletableFuture<CUevent> recorded = new CompletableFuture<>();
    private boolean retired; // guarded by this

    /** Worker of the marking stream: records the event at the current end of {@code stream}. */
    void arm(CUstream stream, String where) {
        try {
            CUevent event = new CUevent();
            CudaErrors.check(JCudaDriver.cuEventCreate(event, CU_EVENT_DISABLE_TIMING), "cuEventCreate for a marker on " + where);
            int result = JCudaDriver.cuEventRecord(event, stream);
            if (result != CudaErrors.CUDA_SUCCESS) {
                JCudaDriver.cuEventDestroy(event);
                throw CudaErrors.error(result, "cuEventRecord of a marker on " + where);
            }
            recorded.complete(event);
        } catch (RuntimeException e) {
            recorded.completeExceptionally(e);
        }
    }

    /** Worker of the waiting stream: the recorded event, waiting at most {@code timeoutNanos} for it. */
    CUevent await(long timeoutNanos) {
        try {
            return recorded.get(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof ArraydException a) {
                throw a;
            }
            throw new ArraydException(ErrorCode.INTERNAL, "marker failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new ArraydException(ErrorCode.DEADLINE_EXCEEDED, "marker: not recorded after "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms (expected: the marking stream to reach it; a cycle of waits?)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ArraydException(ErrorCode.CANCELLED, "interrupted while waiting for a marker", e);
        }
    }

    /**
     * Worker of the waiting stream: makes {@code stream} wait for the marked point on the GPU, unless
     * it is already known to be done.
     */
    synchronized void enqueueWait(CUstream stream, long timeoutNanos, String where) {
        if (retired) {
            return;
        }
        CudaErrors.check(JCudaDriver.cuStreamWaitEvent(stream, await(timeoutNanos), 0), "cuStreamWaitEvent on " + where);
    }

    /** Marking stream, once the host heard the marked point pass: reached; frees the event. */
    synchronized void retire() {
        if (retired) {
            return;
        }
        retired = true;
        if (!recorded.cancel(false) && !recorded.isCompletedExceptionally()) {
            JCudaDriver.cuEventDestroy(recorded.join());
        }
    }

    /** Whether it was retired (the host heard it pass, or its stream refused it). */
    synchronized boolean retired() {
        return retired;
    }

    /** Retired, or its event (once recorded) complete on the GPU. */
    @Override
    public synchronized boolean isReached() {
        if (retired) {
            return true;
        }
        if (!recorded.isDone() || recorded.isCompletedExceptionally()) {
            return recorded.isCompletedExceptionally();
        }
        return JCudaDriver.cuEventQuery(recorded.join()) == CudaErrors.CUDA_SUCCESS;
    }
}
