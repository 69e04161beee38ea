package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.support.NativeLibrary;
import java.util.Optional;

/** Whether the OpenCL ICD loader can be loaded, asked without touching any JOCL class ({@link NativeLibrary}). */
final class LibraryProbe {

    private LibraryProbe() {}

    /** Empty when {@code library} loads and exports {@code clGetPlatformIDs}; otherwise what is missing. */
    static Optional<String> problem(String library) {
        return switch (NativeLibrary.probe(library, "clGetPlatformIDs")) {
            case LOADS -> Optional.empty();
            case NO_SYMBOL -> Optional.of(library + " loads but has no clGetPlatformIDs (expected: an OpenCL ICD loader)");
            case NOT_FOUND -> Optional.of(library + " not found: no OpenCL ICD loader is installed (on Debian/Ubuntu: "
                    + "apt-get install ocl-icd-libopencl1, plus a driver such as pocl-opencl-icd)");
        };
    }
}
