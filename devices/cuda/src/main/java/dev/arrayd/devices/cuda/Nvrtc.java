package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CompileException;
import dev.arrayd.devices.api.ErrorCode;
import jcuda.nvrtc.JNvrtc;
import jcuda.nvrtc.nvrtcProgram;

import java.util.List;

/**
 * One NVRTC compilation to PTX. The only class that names JCuda's NVRTC binding: the backend calls it
 * only after {@link LibraryProbe#nvrtcProblem} found {@code libnvrtc.so.12}.
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

    static Output compile(String unit, List<String> options, List<String> entryPoints) {
        nvrtcProgram program = new nvrtcProgram();
        check(JNvrtc.nvrtcCreateProgram(program, unit, CudaSourceAssembler.USER_FILE, 0, null, null), "nvrtcCreateProgram");
        try {
            for (String name : entryPoints) {
                check(JNvrtc.nvrtcAddNameExpression(program, name), "nvrtcAddNameExpression(" + name + ")");
            }
            int result = JNvrtc.nvrtcCompileProgram(program, options.size(), options.toArray(String[]::new));
            String log = log(program);
            if (result == NVRTC_ERROR_COMPILATION) {
                throw new CompileException("NVRTC could not compile the CUDA C module", log);
            }
            check(result, "nvrtcCompileProgram");
            String[] ptx = new String[1];
            check(JNvrtc.nvrtcGetPTX(program, ptx), "nvrtcGetPTX");
            List<String> lowered = new java.util.ArrayList<>();
            for (String name : entryPoints) {
                String[] out = new String[1];
                int r = JNvrtc.nvrtcGetLoweredName(program, name, out);
                if (r != NVRTC_SUCCESS || out[0] == null) {
                    throw new CompileException("entry point " + name + " is not a __global__ function of the module",
                            "no kernel named " + name + " (expected: __global__ void " + name + "(...) in " + CudaSourceAssembler.USER_FILE + ")");
                }
                lowered.add(out[0]);
            }
            return new Output(ptx[0], log, List.copyOf(lowered));
        } finally {
            JNvrtc.nvrtcDestroyProgram(program);
        }
    }

    private static String log(nvrtcProgram program) {
        String[] log = new String[1];
        if (JNvrtc.nvrtcGetProgramLog(program, log) != NVRTC_SUCCESS || log[0] == null) {
            return "";
        }
        String text = log[0].strip();
        return text.length() > LOG_LIMIT ? text.substring(0, LOG_LIMIT) + "\n[NVRTC log truncated at " + LOG_LIMIT + " chars]" : text;
    }

    private static void check(int result, String what) {
        if (result != NVRTC_SUCCESS) {
            throw new ArraydException(ErrorCode.INTERNAL, what + ": " + JNvrtc.nvrtcGetErrorString(result) + " (" + result + ")");
        }
    }
}
