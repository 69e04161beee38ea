package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.ir.LaneBlocks;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the CPU backend.
 *
 * @param gccCommand        the C compiler to run; default {@code "gcc"} (looked up on {@code PATH})
 * @param deviceMemoryBytes memory of each CPU device for slabs; 0 (the default) means half of the
 *                          machine's physical memory (MemTotal of {@code /proc/meminfo}, 4 GiB when
 *                          unreadable) divided among the devices opened, leaving the rest to the JVM
 *                          heap, the page cache and the programs beside the daemon
 * @param compileTimeout    how long one gcc invocation may run before it is killed and the compile
 *                          fails with DEADLINE_EXCEEDED; default 60 s, which a large machine-generated
 *                          kernel at {@code -O3} stays well inside
 * @param cacheDir          where compiled kernels are kept across restarts (see {@link KernelCache});
 *                          default {@link #defaultCacheDir()}: {@code $XDG_CACHE_HOME/arrayd/kernels}, else
 *                          {@code ~/.cache/arrayd/kernels}. When it cannot be created or written, the
 *                          cache still works in memory and kernels are built in temporary directories
 * @param forceGuards       benchmarks only: render every IR access with its bounds guard, even the ones
 *                          the range analysis proved (to measure what the proofs save); default false
 * @param deviceThreads     worker threads of each CPU device (its compute units); 0 (the default) splits
 *                          the machine's cores among the devices opened, at least one each. A positive
 *                          count gives every device exactly that many, whatever the number of cores: a
 *                          benchmark can then compare one device of one core with two devices of one core
 *                          each. At most {@link #MAX_DEVICE_THREADS}
 * @param computeNice       how much lower than the daemon's other threads the threads that run kernels are
 *                          scheduled: their Linux nice value is raised by this much (0..19; default
 *                          {@value #DEFAULT_COMPUTE_NICE}; 0 keeps it). They still get every idle cycle, but
 *                          the transport, the dispatcher and the programs beside the daemon win a contended
 *                          core from them (see {@link ComputeThreadPriority})
 * @param cacheMaxBytes     most bytes the cache keeps in {@code cacheDir}: past it, the libraries used least
 *                          recently are deleted (default {@link #DEFAULT_CACHE_MAX_BYTES}; see {@link KernelCache})
 * @param vectorBits        the widest SIMD vectors gcc may use for IR kernels on x86-64, 256 or 512 (default
 *                          {@value #DEFAULT_VECTOR_BITS}; gcc's {@code -mprefer-vector-width}): 512 runs vectorized
 *                          compute (a register-blocked matmul, a group reduction) up to 1.7x faster on AVX-512
 *                          CPUs; kernels that call the math library keep 256 whatever this says (see
 *                          {@code CRenderer.NARROW}). 256 is gcc's own choice there. Ignored on other
 *                          architectures and on CPUs without AVX-512
 * @param lanes             benchmarks and tests: when an IR kernel also gets a lane form, which runs blocks of
 *                          work-items as vector lanes ({@link LaneBlocks}); default {@link LaneBlocks.Rule#AUTO}
 *                          (where it pays), {@code OFF} to measure what it brings, {@code ALWAYS} to test it on
 *                          every kernel it can run
 */
public record CpuOptions(String gccCommand, long deviceMemoryBytes, Duration compileTimeout, Path cacheDir,
                         boolean forceGuards, int deviceThreads, int computeNice, long cacheMaxBytes, int vectorBits,
                         LaneBlocks.Rule lanes) {

    public static final String DEFAULT_GCC = "gcc";
    public static final Duration DEFAULT_COMPILE_TIMEOUT = Duration.ofSeconds(60);
    /** Most worker threads one device may ask for: far past any core count, short of a thread bomb. */
    public static final int MAX_DEVICE_THREADS = 1024;
    /** Nice value added to kernel threads by default. */
    public static final int DEFAULT_COMPUTE_NICE = 10;
    /** Default bound of the kernel cache on disk. */
    public static final long DEFAULT_CACHE_MAX_BYTES = 1L << 30;
    /** Default widest vectors of IR kernels on x86-64, in bits. */
    public static final int DEFAULT_VECTOR_BITS = 512;

    public CpuOptions {
        Objects.requireNonNull(gccCommand, "gccCommand");
        Objects.requireNonNull(compileTimeout, "compileTimeout");
        Objects.requireNonNull(cacheDir, "cacheDir");
        Objects.requireNonNull(lanes, "lanes");
        if (gccCommand.isBlank()) {
            throw new IllegalArgumentException("gccCommand: \"" + gccCommand + "\" (expected: a command)");
        }
        if (deviceMemoryBytes < 0) {
            throw new IllegalArgumentException("deviceMemoryBytes: " + deviceMemoryBytes + " (expected: >= 0, 0 for the default)");
        }
        if (compileTimeout.isNegative()) {
            throw new IllegalArgumentException("compileTimeout: " + compileTimeout + " (expected: >= 0)");
        }
        if (deviceThreads < 0 || deviceThreads > MAX_DEVICE_THREADS) {
            throw new IllegalArgumentException("deviceThreads: " + deviceThreads + " (expected: 0.." + MAX_DEVICE_THREADS
                    + ", 0 to split the cores among the devices)");
        }
        if (cacheMaxBytes < 0) {
            throw new IllegalArgumentException("cacheMaxBytes: " + cacheMaxBytes + " (expected: >= 0)");
        }
        if (vectorBits != 256 && vectorBits != 512) {
            throw new IllegalArgumentException("vectorBits: " + vectorBits + " (expected: 256 or 512)");
        }
        if (computeNice < 0 || computeNice > ComputeThreadPriority.MAX_NICE) {
            throw new IllegalArgumentException("computeNice: " + computeNice + " (expected: 0.." + ComputeThreadPriority.MAX_NICE
                    + ", 0 to keep kernel threads at the daemon's priority)");
        }
    }

    public static CpuOptions defaults() {
        return new CpuOptions(DEFAULT_GCC, 0, DEFAULT_COMPILE_TIMEOUT, defaultCacheDir(), false, 0, DEFAULT_COMPUTE_NICE, DEFAULT_CACHE_MAX_BYTES,
                DEFAULT_VECTOR_BITS, LaneBlocks.Rule.AUTO);
    }

    /** {@code $XDG_CACHE_HOME/arrayd/kernels} when that variable is set (and absolute), else {@code ~/.cache/arrayd/kernels}. */
    public static Path defaultCacheDir() {
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()
                ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("arrayd").resolve("kernels");
    }

    public CpuOptions withGccCommand(String gcc) {
        return new CpuOptions(gcc, deviceMemoryBytes, compileTimeout, cacheDir, forceGuards, deviceThreads, computeNice, cacheMaxBytes, vectorBits, lanes);
    }

    public CpuOptions withDeviceMemoryBytes(long bytes) {
        return new CpuOptions(gccCommand, bytes, compileTimeout, cacheDir, forceGuards, deviceThreads, computeNice, cacheMaxBytes, vectorBits, lanes);
    }

    public CpuOptions withCompileTimeout(Duration timeout) {
        return new CpuOptions(gccCommand, deviceMemoryBytes, timeout, cacheDir, forceGuards, deviceThreads, computeNice, cacheMaxBytes, vectorBits, lanes);
    }

    public CpuOptions withCacheDir(Path dir) {
        return new CpuOptions(gccCommand, deviceMemoryBytes, compileTimeout, dir, forceGuards, deviceThreads, computeNice, cacheMaxBytes, vectorBits, lanes);
    }

    public CpuOptions withForceGuards(boolean force) {
        return new CpuOptions(gccCommand, deviceMemoryBytes, compileTimeout, cacheDir, force, deviceThreads, computeNice, cacheMaxBytes, vectorBits, lanes);
    }

    /** @param threads worker threads of each device; 0 splits the cores among the devices */
    public CpuOptions withDeviceThreads(int threads) {
        return new CpuOptions(gccCommand, deviceMemoryBytes, compileTimeout, cacheDir, forceGuards, threads, computeNice, cacheMaxBytes, vectorBits, lanes);
    }

    /** @param nice nice value added to the threads that run kernels (0..19; 0 keeps their priority) */
    public CpuOptions withComputeNice(int nice) {
        return new CpuOptions(gccCommand, deviceMemoryBytes, compileTimeout, cacheDir, forceGuards, deviceThreads, nice, cacheMaxBytes, vectorBits, lanes);
    }

    public CpuOptions withCacheMaxBytes(long bytes) {
        return new CpuOptions(gccCommand, deviceMemoryBytes, compileTimeout, cacheDir, forceGuards, deviceThreads, computeNice,
                bytes, vectorBits, lanes);
    }

    /** @param bits widest vectors of IR kernels on x86-64: 256 or 512 */
    public CpuOptions withVectorBits(int bits) {
        return new CpuOptions(gccCommand, deviceMemoryBytes, compileTimeout, cacheDir, forceGuards, deviceThreads, computeNice,
                cacheMaxBytes, bits, lanes);
    }

    /** @param rule when IR kernels also get a lane form (benchmarks and tests; see {@link LaneBlocks}) */
    public CpuOptions withLanes(LaneBlocks.Rule rule) {
        return new CpuOptions(gccCommand, deviceMemoryBytes, compileTimeout, cacheDir, forceGuards, deviceThreads, computeNice,
                cacheMaxBytes, vectorBits, rule);
    }
}
