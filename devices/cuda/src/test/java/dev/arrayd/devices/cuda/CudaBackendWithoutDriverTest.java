package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.conformance.AbstractDeviceConformanceTest;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Guarded loading, in this very JVM: with no driver library the backend says so exactly, refuses to
 * open devices or compile with UNAVAILABLE, and never lets JCuda's {@code UnsatisfiedLinkError} /
 * {@code NoClassDefFoundError} escape (asking twice proves no class was left half-initialized).
 */
class CudaBackendWithoutDriverTest {

    private static final String MISSING = "libarrayd-test-no-such-cuda.so.1";

    private static boolean loads(String library) {
        try (Arena arena = Arena.ofConfined()) {
            SymbolLookup.libraryLookup(library, arena);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static KernelSource vadd(Dialect dialect) {
        return new KernelSource(dialect, CudaKernels.source("vadd"), List.of(AbstractDeviceConformanceTest.cannedSignature("vadd")));
    }

    @Test
    void missingDriverLibraryIsTheExactReason() {
        for (int attempt = 0; attempt < 2; attempt++) {
            try (CudaBackend backend = new CudaBackend(CudaOptions.defaults().withDriverLibrary(MISSING))) {
                assertEquals(Optional.of("CUDA driver library " + MISSING + " not found"), backend.unavailableReason());
                ArraydException open = assertThrows(ArraydException.class, () -> backend.openDevices(0));
                assertEquals(ErrorCode.UNAVAILABLE, open.code());
                assertTrue(open.getMessage().contains(MISSING), open::getMessage);
                ArraydException compile = assertThrows(ArraydException.class, () -> backend.compiler().compile(vadd(Dialect.CUDA_C)));
                assertEquals(ErrorCode.UNAVAILABLE, compile.code());
                assertTrue(compile.getMessage().contains(MISSING), compile::getMessage);
            }
        }
    }

    /** On a machine without the NVIDIA driver (like CI), the default backend names libcuda.so.1. */
    @Test
    void defaultBackendOnAMachineWithoutTheDriver() {
        Assumptions.assumeFalse(loads(CudaOptions.DRIVER_LIBRARY), "libcuda.so.1 is installed here");
        try (CudaBackend backend = new CudaBackend()) {
            assertEquals(Optional.of("CUDA driver library libcuda.so.1 not found"), backend.unavailableReason());
            assertEquals("cuda", backend.name());
            assertTrue(backend.compiler().dialects().contains(Dialect.PTX));
        }
        try (CudaBackend again = new CudaBackend()) {
            assertEquals(Optional.of("CUDA driver library libcuda.so.1 not found"), again.unavailableReason());
        }
    }

    @Test
    void missingNvrtcIsNamedExactly() {
        try (CudaBackend backend = new CudaBackend(CudaOptions.defaults().withNvrtcLibrary("libarrayd-test-no-such-nvrtc.so.12"))) {
            assertEquals(Optional.of("NVRTC library libarrayd-test-no-such-nvrtc.so.12 not found"), backend.nvrtcProblem());
            assertEquals(java.util.Set.of(Dialect.PTX), backend.compiler().dialects(), "CUDA C and IR need NVRTC");
        }
        Assumptions.assumeFalse(NvrtcLibrary.CANDIDATES.stream().anyMatch(CudaBackendWithoutDriverTest::loads),
                "an NVRTC library is installed here");
        assertEquals(Optional.of("NVRTC library not found (tried libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so)"),
                NvrtcLibrary.resolve(CudaOptions.NVRTC_LIBRARY).problem(), "auto, the default, tries each major version");
    }

    @Test
    void aLibraryThatLoadsButIsNotNvrtcIsNamed() {
        NvrtcLibrary.Resolved libc = NvrtcLibrary.resolve("libc.so.6");
        assertEquals(null, libc.library());
        assertEquals(Optional.of("NVRTC library libc.so.6 loads but has no nvrtcCreateProgram"), libc.problem());
    }

    @Test
    void aLibraryWithoutTheSymbolIsNamed() {
        Optional<String> problem = LibraryProbe.problem("libc.so.6", "cuInit", "CUDA driver");
        assertEquals(Optional.of("CUDA driver library libc.so.6 loads but has no cuInit"), problem);
        assertFalse(LibraryProbe.problem("libc.so.6", "malloc", "C").isPresent());
    }
}
