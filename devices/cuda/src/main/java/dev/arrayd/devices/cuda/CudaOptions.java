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
 * @param stagingChunkBytes  size of one pinned staging buffer; default 4 MiB (big enough to reach copy
 *                           bandwidth, small enough that a few of them per device stay cheap)
 * @param stagingBuffers     pinned staging buffers per device at most; default 8 (32 MiB pinned per device);
 *                           a transfer holds at most two of them at a time, so this bounds concurrency, not size
 * @param moduleCacheEntries compiled modules (PTX text) kept by content hash; default 128
 * @param defaultBlockSize   threads per block in x when a launch gives no local dims; default 256
 */
public record CudaOptions(String driverLibrary, String nvrtcLibrary, Duration compileTimeout, long stagingChunkBytes,
                          int stagingBuffers, int moduleCacheEntries, int defaultBlockSize) {

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
        if (moduleCacheEntries < 0) {
            throw new IllegalArgumentException("moduleCacheEntries: " + moduleCacheEntries + " (expected: >= 0)");
        }
        if (defaultBlockSize < 1 || defaultBlockSize > 1024) {
            throw new IllegalArgumentException("defaultBlockSize: " + defaultBlockSize + " (expected: 1 to 1024)");
        }
    }

    public static CudaOptions defaults() {
        return new CudaOptions(DRIVER_LIBRARY, NVRTC_LIBRARY, Duration.ofSeconds(60), 4L << 20, 8, 128, 256);
    }

    public CudaOptions withDriverLibrary(String library) {
        return new CudaOptions(library, nvrtcLibrary, compileTimeout, stagingChunkBytes, stagingBuffers, moduleCacheEntries,
                defaultBlockSize);
    }

    public CudaOptions withNvrtcLibrary(String library) {
        return new CudaOptions(driverLibrary, library, compileTimeout, stagingChunkBytes, stagingBuffers, moduleCacheEntries,
                defaultBlockSize);
    }

    public CudaOptions withStaging(long chunkBytes, int buffers) {
        return new CudaOptions(driverLibrary, nvrtcLibrary, compileTimeout, chunkBytes, buffers, moduleCacheEntries,
                defaultBlockSize);
    }

    public CudaOptions withCompileTimeout(Duration timeout) {
        return new CudaOptions(driverLibrary, nvrtcLibrary, timeout, stagingChunkBytes, stagingBuffers, moduleCacheEntries,
                defaultBlockSize);
    }
}
