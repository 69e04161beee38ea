package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CompileException;
import dev.arrayd.devices.api.ErrorCode;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * One NVRTC compilation to PTX, through {@link NvrtcLibrary} (whichever {@code libnvrtc} the host has).
 *
 * <p>Entry points are registered as name expressions, so they are found whether declared
 * {@code extern "C"} or not (the lowered, possibly mangled, names come back with the PTX).
 */
final class Nvrtc {

    private static final int NVRTC_SUCCESS = 0;
    private static final int NVRTC_ERROR_COMPILATION = 6;
    static final int LOG_LIMIT = 64 * 1024;

    /** PTX, NVRTC's log, and the lowered name of each entry point, in order. */
    record Output(String ptx, String log, List<String> loweredNames) {}

    private Nvrtc() {}

    static Output compile(NvrtcLibrary nvrtc, String unit, List<String> options, List<String> entryPoints) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment programAt = a.allocate(ValueLayout.ADDRESS);
            check(nvrtc, (int) nvrtc.createProgram.invokeExact(programAt, a.allocateFrom(unit),
                    a.allocateFrom(CudaSourceAssembler.USER_FILE), 0, MemorySegment.NULL, MemorySegment.NULL),
                    "nvrtcCreateProgram");
            MemorySegment program = programAt.get(ValueLayout.ADDRESS, 0);
            try {
                for (String name : entryPoints) {
                    check(nvrtc, (int) nvrtc.addNameExpression.invokeExact(program, a.allocateFrom(name)),
                            "nvrtcAddNameExpression(" + name + ")");
                }
                MemorySegment opts = a.allocate(ValueLayout.ADDRESS, Math.max(1, options.size()));
                for (int i = 0; i < options.size(); i++) {
                    opts.setAtIndex(ValueLayout.ADDRESS, i, a.allocateFrom(options.get(i)));
                }
                int result = (int) nvrtc.compileProgram.invokeExact(program, options.size(), opts);
                String log = log(nvrtc, program, a);
                if (result == NVRTC_ERROR_COMPILATION) {
                    throw new CompileException("NVRTC could not compile the CUDA C module", log);
                }
                check(nvrtc, result, "nvrtcCompileProgram");
                MemorySegment size = a.allocate(ValueLayout.JAVA_LONG);
                check(nvrtc, (int) nvrtc.getPtxSize.invokeExact(program, size), "nvrtcGetPTXSize");
                MemorySegment ptx = a.allocate(Math.max(1, size.get(ValueLayout.JAVA_LONG, 0)));
                check(nvrtc, (int) nvrtc.getPtx.invokeExact(program, ptx), "nvrtcGetPTX");
                List<String> lowered = new ArrayList<>();
                for (String name : entryPoints) {
                    MemorySegment out = a.allocate(ValueLayout.ADDRESS);
                    int r = (int) nvrtc.getLoweredName.invokeExact(program, a.allocateFrom(name), out);
                    MemorySegment text = out.get(ValueLayout.ADDRESS, 0);
                    if (r != NVRTC_SUCCESS || text.equals(MemorySegment.NULL)) {
                        throw new CompileException("entry point " + name + " is not a __global__ function of the module",
                                "no kernel named " + name + " (expected: __global__ void " + name + "(...) in "
                                        + CudaSourceAssembler.USER_FILE + ")");
                    }
                    lowered.add(text.reinterpret(64 * 1024).getString(0)); // owned by the program: read before destroy
                }
                return new Output(ptx.getString(0), log, List.copyOf(lowered));
            } finally {
                int ignored = (int) nvrtc.destroyProgram.invokeExact(programAt);
            }
        } catch (ArraydException e) {
            throw e; // CompileException included
        } catch (Throwable t) {
            throw new ArraydException(ErrorCode.INTERNAL, "NVRTC (" + nvrtc + "): " + t, t);
        }
    }

    private static String log(NvrtcLibrary nvrtc, MemorySegment program, Arena a) throws Throwable {
        MemorySegment size = a.allocate(ValueLayout.JAVA_LONG);
        if ((int) nvrtc.getProgramLogSize.invokeExact(program, size) != NVRTC_SUCCESS) {
            return "";
        }
        long bytes = size.get(ValueLayout.JAVA_LONG, 0);
        if (bytes <= 1) {
            return "";
        }
        MemorySegment text = a.allocate(bytes);
        if ((int) nvrtc.getProgramLog.invokeExact(program, text) != NVRTC_SUCCESS) {
            return "";
        }
        String log = text.getString(0).strip();
        return log.length() > LOG_LIMIT ? log.substring(0, LOG_LIMIT) + "\n[NVRTC log truncated at " + LOG_LIMIT + " chars]" : log;
    }

    private static void check(NvrtcLibrary nvrtc, int result, String what) {
        if (result != NVRTC_SUCCESS) {
            throw new ArraydException(ErrorCode.INTERNAL, what + ": " + nvrtc.errorString(result) + " (" + result + ")");
        }
    }
}
