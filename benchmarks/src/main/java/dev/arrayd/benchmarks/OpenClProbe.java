package dev.arrayd.benchmarks;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.util.List;
import java.util.Optional;

/**
 * Whether this process can run OpenCL directly, asked in an order that never breaks it: first the ICD
 * loader {@code libOpenCL.so.1} through FFM, touching no JOCL class (JOCL's class initializer loads its
 * native part, which links the loader; a failed initialization would stay failed for the whole JVM);
 * only then JOCL, for the devices.
 */
final class OpenClProbe {

    static final String LOADER = "libOpenCL.so.1";

    private OpenClProbe() {}

    /** The reason direct OpenCL cannot run here, or empty when at least one device exists. */
    static Optional<String> unavailableReason() {
        try (Arena arena = Arena.ofConfined()) {
            if (SymbolLookup.libraryLookup(LOADER, arena).find("clGetPlatformIDs").isEmpty()) {
                return Optional.of(LOADER + " has no clGetPlatformIDs (expected: an OpenCL ICD loader)");
            }
        } catch (IllegalArgumentException | IllegalCallerException | UnsupportedOperationException e) {
            return Optional.of(LOADER + " not found: no OpenCL ICD loader is installed");
        }
        try {
            List<String> devices = JoclKernelColumn.deviceNames();
            return devices.isEmpty() ? Optional.of("no OpenCL device: the ICD loader found no platform with a device")
                    : Optional.empty();
        } catch (RuntimeException | LinkageError e) {
            return Optional.of("OpenCL through JOCL failed: " + e);
        }
    }
}
