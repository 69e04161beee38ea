package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.support.NativeLibrary;
import java.util.Optional;

/**
 * Whether a native library can be loaded, asked through FFM without touching any JCuda class.
 *
 * <p>Why: JCuda's {@code JCudaDriver} loads its JNI part in a static initializer, and that part links
 * against {@code libcuda.so.1}. Without it the first touch
 * throws {@code UnsatisfiedLinkError}, and every later touch {@code NoClassDefFoundError} for the rest of
 * the process. So the backend asks here first and never names those classes when this says no.
 */
final class LibraryProbe {

    private LibraryProbe() {}

    /** Empty when {@code library} loads and exports {@code symbol}; otherwise the exact reason. */
    static Optional<String> problem(String library, String symbol, String what) {
        return switch (NativeLibrary.probe(library, symbol)) {
            case LOADS -> Optional.empty();
            case NO_SYMBOL -> Optional.of(what + " library " + library + " loads but has no " + symbol);
            case NOT_FOUND -> Optional.of(what + " library " + library + " not found");
        };
    }

    /** The driver: {@code "CUDA driver library libcuda.so.1 not found"} when absent. */
    static Optional<String> driverProblem(String library) {
        return problem(library, "cuInit", "CUDA driver");
    }

    /** The runtime compiler: {@code "NVRTC library libnvrtc.so.13 not found"} when absent. */
    static Optional<String> nvrtcProblem(String library) {
        return problem(library, "nvrtcCreateProgram", "NVRTC");
    }
}
