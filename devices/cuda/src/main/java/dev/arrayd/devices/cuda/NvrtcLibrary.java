package dev.arrayd.devices.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * NVRTC, the CUDA runtime compiler, bound through FFM to whichever {@code libnvrtc} the host has: its C API
 * has been stable across major versions, so one binding serves CUDA 12 and 13 (JCuda's own binding links
 * against {@code libnvrtc.so.12} only). {@link #AUTO} tries {@link #CANDIDATES} in order.
 */
final class NvrtcLibrary {

    /** The option value that searches {@link #CANDIDATES}. */
    static final String AUTO = "auto";
    /** Tried in this order by {@link #AUTO}: the newest major version first, then the unversioned name. */
    static final List<String> CANDIDATES = List.of("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so");

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout ADDRESS = ValueLayout.ADDRESS;

    /** A library that loaded, or why none did. */
    record Resolved(NvrtcLibrary library, Optional<String> problem) {}

    private final String name;
    private final String version;
    final MethodHandle createProgram;
    final MethodHandle addNameExpression;
    final MethodHandle compileProgram;
    final MethodHandle getPtxSize;
    final MethodHandle getPtx;
    final MethodHandle getProgramLogSize;
    final MethodHandle getProgramLog;
    final MethodHandle getLoweredName;
    final MethodHandle destroyProgram;
    private final MethodHandle getErrorString;

    private NvrtcLibrary(String name, SymbolLookup lookup) throws Throwable {
        this.name = name;
        Linker linker = Linker.nativeLinker();
        createProgram = bind(linker, lookup, "nvrtcCreateProgram",
                FunctionDescriptor.of(INT, ADDRESS, ADDRESS, ADDRESS, INT, ADDRESS, ADDRESS));
        addNameExpression = bind(linker, lookup, "nvrtcAddNameExpression", FunctionDescriptor.of(INT, ADDRESS, ADDRESS));
        compileProgram = bind(linker, lookup, "nvrtcCompileProgram", FunctionDescriptor.of(INT, ADDRESS, INT, ADDRESS));
        getPtxSize = bind(linker, lookup, "nvrtcGetPTXSize", FunctionDescriptor.of(INT, ADDRESS, ADDRESS));
        getPtx = bind(linker, lookup, "nvrtcGetPTX", FunctionDescriptor.of(INT, ADDRESS, ADDRESS));
        getProgramLogSize = bind(linker, lookup, "nvrtcGetProgramLogSize", FunctionDescriptor.of(INT, ADDRESS, ADDRESS));
        getProgramLog = bind(linker, lookup, "nvrtcGetProgramLog", FunctionDescriptor.of(INT, ADDRESS, ADDRESS));
        getLoweredName = bind(linker, lookup, "nvrtcGetLoweredName", FunctionDescriptor.of(INT, ADDRESS, ADDRESS, ADDRESS));
        destroyProgram = bind(linker, lookup, "nvrtcDestroyProgram", FunctionDescriptor.of(INT, ADDRESS));
        getErrorString = bind(linker, lookup, "nvrtcGetErrorString", FunctionDescriptor.of(ADDRESS, INT));
        MethodHandle versionCall = bind(linker, lookup, "nvrtcVersion", FunctionDescriptor.of(INT, ADDRESS, ADDRESS));
        try (Arena a = Arena.ofConfined()) {
            MemorySegment major = a.allocate(INT);
            MemorySegment minor = a.allocate(INT);
            int r = (int) versionCall.invokeExact(major, minor);
            version = r == 0 ? major.get(INT, 0) + "." + minor.get(INT, 0) : "unknown";
        }
    }

    private static MethodHandle bind(Linker linker, SymbolLookup lookup, String symbol, FunctionDescriptor fd) {
        MemorySegment address = lookup.find(symbol).orElseThrow(() -> new IllegalStateException("no symbol " + symbol));
        return linker.downcallHandle(address, fd);
    }

    /**
     * The library {@code configured} names ({@link #AUTO}: the first of {@link #CANDIDATES} that loads),
     * bound; or why it could not be, e.g. {@code "NVRTC library not found (tried libnvrtc.so.13, ...)"}.
     */
    static Resolved resolve(String configured) {
        List<String> names = AUTO.equals(configured) ? CANDIDATES : List.of(configured);
        List<String> problems = new ArrayList<>();
        for (String n : names) {
            Optional<String> problem = LibraryProbe.nvrtcProblem(n);
            if (problem.isPresent()) {
                problems.add(problem.get());
                continue;
            }
            try {
                // loaded for the life of the process: compiled modules may be created at any time
                return new Resolved(new NvrtcLibrary(n, SymbolLookup.libraryLookup(n, Arena.global())), Optional.empty());
            } catch (Throwable t) {
                problems.add("NVRTC library " + n + " loads but cannot be bound: " + t.getMessage());
            }
        }
        if (names.size() == 1) {
            return new Resolved(null, Optional.of(problems.getFirst()));
        }
        boolean noneFound = problems.stream().allMatch(p -> p.endsWith(" not found"));
        return new Resolved(null, Optional.of(noneFound ? "NVRTC library not found (tried " + String.join(", ", names) + ")"
                : "no usable NVRTC library: " + String.join("; ", problems)));
    }

    /** The library's file name, e.g. {@code libnvrtc.so.13}. */
    String name() {
        return name;
    }

    /** NVRTC's own version, e.g. {@code 13.0}. */
    String version() {
        return version;
    }

    /** NVRTC's name of a result code, e.g. {@code NVRTC_ERROR_COMPILATION}. */
    String errorString(int result) {
        try {
            MemorySegment s = (MemorySegment) getErrorString.invokeExact(result);
            return s.equals(MemorySegment.NULL) ? "NVRTC error " + result : s.reinterpret(256).getString(0);
        } catch (Throwable t) {
            return "NVRTC error " + result;
        }
    }

    @Override
    public String toString() {
        return name + " (NVRTC " + version + ")";
    }
}
