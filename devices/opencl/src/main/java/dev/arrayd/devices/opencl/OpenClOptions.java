package dev.arrayd.devices.opencl;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the OpenCL backend.
 *
 * @param libraryName        the OpenCL ICD loader to probe before JOCL is touched; default
 *                           {@code "libOpenCL.so.1"}, the soname JOCL's native part opens (a name that
 *                           cannot be loaded makes the backend unavailable with that name in the reason)
 * @param compileTimeout     how long one {@code clBuildProgram} may run; default 60 s. A build cannot be
 *                           cancelled, so past the limit the compile fails with DEADLINE_EXCEEDED and
 *                           the build finishes in the background, its program then released
 * @param binaryCacheEntries compiled program binaries kept per device, keyed by a hash of the source
 *                           arrayd hands to the driver; default 256. A cached binary turns a later
 *                           compile of the same source into {@code clCreateProgramWithBinary}, which
 *                           skips the driver's front end (PoCL: ~1 s of LLVM on a cold cache)
 */
public record OpenClOptions(String libraryName, Duration compileTimeout, int binaryCacheEntries) {

    public static final String DEFAULT_LIBRARY = "libOpenCL.so.1";
    public static final Duration DEFAULT_COMPILE_TIMEOUT = Duration.ofSeconds(60);
    public static final int DEFAULT_BINARY_CACHE_ENTRIES = 256;

    public OpenClOptions {
        Objects.requireNonNull(libraryName, "libraryName");
        Objects.requireNonNull(compileTimeout, "compileTimeout");
        if (libraryName.isBlank()) {
            throw new IllegalArgumentException("libraryName: \"" + libraryName + "\" (expected: a library name or path)");
        }
        if (compileTimeout.isNegative()) {
            throw new IllegalArgumentException("compileTimeout: " + compileTimeout + " (expected: >= 0)");
        }
        if (binaryCacheEntries < 0) {
            throw new IllegalArgumentException("binaryCacheEntries: " + binaryCacheEntries + " (expected: >= 0)");
        }
    }

    public static OpenClOptions defaults() {
        return new OpenClOptions(DEFAULT_LIBRARY, DEFAULT_COMPILE_TIMEOUT, DEFAULT_BINARY_CACHE_ENTRIES);
    }

    public OpenClOptions withLibraryName(String name) {
        return new OpenClOptions(name, compileTimeout, binaryCacheEntries);
    }

    public OpenClOptions withCompileTimeout(Duration timeout) {
        return new OpenClOptions(libraryName, timeout, binaryCacheEntries);
    }

    public OpenClOptions withBinaryCacheEntries(int entries) {
        return new OpenClOptions(libraryName, compileTimeout, entries);
    }
}
