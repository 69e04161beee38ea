package dev.arrayd.devices.cuda;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the CUDA backend. {@link #defaults()} documents each default and why.
 *
 * @param driverLibrary      the driver library probed before any JCuda class is touched; default
 *                           {@code libcuda.so.1} (what the NVIDIA driver installs; JCuda loads the same)
 * @param nvrtcLibrary       the runtime compiler, bound through FFM ({@link NvrtcLibrary}): a library name, or
 *                           {@code auto} (the default): the first of {@code libnvrtc.so.13},
 *                           {@code libnvrtc.so.12} and {@code libnvrtc.so} that the loader finds
 * @param compileTimeout     bound of one NVRTC compilation or PTX JIT; default 60 s (large kernels take
 *                           seconds; a runaway template instantiation should not hold a client forever)
 * @param stagingChunkBytes  size of one pinned staging buffer; default 4 MiB (DMA out of pinned memory in
 *                           4 MiB pieces runs at 97% of one whole-buffer copy on an H200)
 * @param stagingBuffers     pinned staging buffers per device at most; default 32 (128 MiB pinned per device);
 *                           a serial transfer holds two of them at a time, a parallel one two per lane and at
 *                           most half of them, so this bounds concurrency, not size
 * @param copyLanes          threads that copy a large transfer between ordinary host memory and pinned staging
 *                           at once, the stream's worker included; default half the cores, at most 8 (one
 *                           thread copies 9 GB/s on an H200's host, 8 copy 42 GB/s, and one PCIe 5 link
 *                           moves 55); 1 keeps every transfer on the worker
 * @param moduleCacheEntries compiled modules (PTX text) kept by content hash; default 128
 * @param defaultBlockSize   threads per block in x when a launch gives no local dims; default 256
 */
public record CudaOptions(String driverLibrary, String nvrtcLibrary, Duration compileTimeout, long stagingChunkBytes,
                          int stagingBuffers, int copyLanes, int moduleCacheEntries, int defaultBlockSize) {

    public static final String DRIVER_LIBRARY = "libcuda.so.1";
    /** The first of libnvrtc.so.13, libnvrtc.so.12 and libnvrtc.so that loads. */
    public static final String NVRTC_LIBRARY = NvrtcLibrary.AUTO;

    public CudaOptions {
        Objects.requireNonNull(driverLibrary, "driverLibrary");
        Objects.requireNonNull(nvrtcLibrary, "nvrtcLibrary");
        Objects.requireNonNull(compileTimeout, "compileTimeout");
        if (compileTimeout.isNegative() || compileTimeout.isZero()) {
            throw new IllegalArgumentException("compileTimeout: " + compileTimeout + " (expected: > 0)");
        }
        if (stagingChunkBytes < 4096) {
            throw new IllegalArgumentException("stagingChunkBytes: " + stagingChunkBytes + " (expected: >= 4096)");
        }
        if (stagingBuffers < 2) {
            throw new IllegalArgumentException("stagingBuffers: " + stagingBuffers + " (expected: >= 2, a transfer may hold two)");
        }
        if (copyLanes < 1 || copyLanes > 64) {
            throw new IllegalArgumentException("copyLanes: " + copyLanes + " (expected: 1 to 64)");
        }
        if (moduleCacheEntries < 0) {
            throw new IllegalArgumentException("moduleCacheEntries: " + moduleCacheEntries + " (expected: >= 0)");
        }
        if (defaultBlockSize < 1 || defaultBlockSize > 1024) {
            throw new IllegalArgumentException("defaultBlockSize: " + defaultBlockSize + " (expected: 1 to 1024)");
        }
    }

    public static CudaOptions defaults() {
        return new CudaOptions(DRIVER_LIBRARY, NVRTC_LIBRARY, Duration.ofSeconds(60), 4L << 20, 32, DEFAULT_COPY_LANES, 128, 256);
    }

    /** Half the cores, 1 to 8. */
    static final int DEFAULT_COPY_LANES = Math.clamp(Runtime.getRuntime().availableProcessors() / 2, 1, 8);

    public CudaOptions withCopyLanes(int lanes) {
        return new CudaOptions(driverLibrary, nvrtcLibrary, compileTimeout, stagingChunkBytes, stagingBuffers, lanes,
                moduleCacheEntries, defaultBlockSize);
    }

    public CudaOptions withDriverLibrary(String library) {
        return new CudaOptions(library, nvrtcLibrary, compileTimeout, stagingChunkBytes, stagingBuffers, copyLanes,
                moduleCacheEntries, defaultBlockSize);
    }

    public CudaOptions withNvrtcLibrary(String library) {
        return new CudaOptions(driverLibrary, library, compileTimeout, stagingChunkBytes, stagingBuffers, copyLanes,
                moduleCacheEntries, defaultBlockSize);
    }

    public CudaOptions withStaging(long chunkBytes, int buffers) {
        return new CudaOptions(driverLibrary, nvrtcLibrary, compileTimeout, chunkBytes, buffers, copyLanes,
                moduleCacheEntries, defaultBlockSize);
    }

    public CudaOptions withCompileTimeout(Duration timeout) {
        return new CudaOptions(driverLibrary, nvrtcLibrary, timeout, stagingChunkBytes, stagingBuffers, copyLanes,
                moduleCacheEntries, defaultBlockSize);
    }
}
