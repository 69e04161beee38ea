package dev.arrayd.devices.cuda;

import jcuda.Pointer;
import jcuda.driver.JCudaDriver;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Pinned host buffers ({@code cuMemAllocHost}) for uploads and downloads of one device: DMA from pinned
 * memory runs at full bus speed and truly asynchronously, where pageable memory is copied by the driver
 * through its own bounce buffer (2-3x slower, and synchronous).
 *
 * <p>Bounded: at most {@code capacity} buffers of {@code chunkBytes}, allocated on first need and reused
 * until the device closes. A transfer takes one or two at once ({@link #tryAcquire}/{@link #acquire}
 * of all it needs in one step), so no stream ever holds some while waiting for more: together with
 * "drain your own in-flight work before blocking" in {@link CudaStream}, that rules out deadlock.
 */
final class StagingPool {

    /** One pinned buffer: the JCuda pointer for copies, a segment view for host-side memcpy. */
    record Buffer(Pointer host, MemorySegment segment) {}

    private final long chunkBytes;
    private final Semaphore permits;
    private final ConcurrentLinkedQueue<Buffer> free = new ConcurrentLinkedQueue<>();
    private final List<Buffer> all = new ArrayList<>(); // guarded by all
    private boolean closed; // guarded by all

    StagingPool(long chunkBytes, int capacity) {
        this.chunkBytes = chunkBytes;
        this.permits = new Semaphore(capacity);
    }

    long chunkBytes() {
        return chunkBytes;
    }

    /** {@code count} buffers now, or null. The caller's context must be current (a first use allocates). */
    Buffer[] tryAcquire(int count) {
        return permits.tryAcquire(count) ? take(count) : null;
    }

    /** {@code count} buffers, waiting up to {@code timeoutNanos}; null on timeout. */
    Buffer[] acquire(int count, long timeoutNanos) throws InterruptedException {
        return permits.tryAcquire(count, timeoutNanos, TimeUnit.NANOSECONDS) ? take(count) : null;
    }

    private Buffer[] take(int count) {
        Buffer[] out = new Buffer[count];
        int got = 0;
        try {
            for (; got < count; got++) {
                Buffer b = free.poll();
                out[got] = b != null ? b : allocate();
            }
            return out;
        } catch (RuntimeException e) {
            for (int i = 0; i < got; i++) {
                free.add(out[i]);
            }
            permits.release(count);
            throw e;
        }
    }

    private Buffer allocate() {
        Pointer host = new Pointer();
        CudaErrors.check(JCudaDriver.cuMemAllocHost(host, chunkBytes), "cuMemAllocHost of a " + chunkBytes + "-byte staging buffer");
        Buffer b = new Buffer(host, MemorySegment.ofBuffer(host.getByteBuffer(0, chunkBytes)));
        synchronized (all) {
            all.add(b);
        }
        return b;
    }

    void release(Buffer[] buffers) {
        for (Buffer b : buffers) {
            free.add(b);
        }
        permits.release(buffers.length);
    }

    /** Frees every buffer (the device is closing: no stream uses them any more). Context must be current. */
    void close() {
        synchronized (all) {
            if (closed) {
                return;
            }
            closed = true;
            for (Buffer b : all) {
                JCudaDriver.cuMemFreeHost(b.host());
            }
            all.clear();
            free.clear();
        }
    }
}
