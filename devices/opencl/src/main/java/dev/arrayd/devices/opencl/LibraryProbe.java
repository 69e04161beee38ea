package dev.arrayd.devices.opencl;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.util.Optional;

/**
 * Whether the OpenCL ICD loader can be loaded, asked without touching any JOCL class: JOCL's
 * static initializer loads its native part, which needs the loader, and a failed class
 * initialization would be a {@code NoClassDefFoundError} for the rest of the process.
 */
final class LibraryProbe {

    private LibraryProbe() {}

    /** Empty when {@code library} loads and exports {@code clGetPlatformIDs}; otherwise what is missing. */
    static Optional<String> problem(String library) {
        try (Arena arena = Arena.ofConfined()) {
            SymbolLookup lookup = SymbolLookup.libraryLookup(library, arena);
            if (lookup.find("clGetPlatformIDs").isEmpty()) {
                return Optional.of(library + " loads but has no clGetPlatformIDs (expected: an OpenCL ICD loader)");
            }
            return Optional.empty();
        } catch (IllegalArgumentException | IllegalCallerException | UnsupportedOperationException e) {
            return Optional.of(library + " not found: no OpenCL ICD loader is installed (on Debian/Ubuntu: "
                    + "apt-get install ocl-icd-libopencl1, plus a driver such as pocl-opencl-icd)");
        }
    }
}
