package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;

/**
 * CUDA driver results as {@link ArraydException}s naming the CUDA error ({@code CUDA_ERROR_OUT_OF_MEMORY})
 * and what was being done. The code table is pure (numbers from {@code cuda.h}), so it is tested without
 * a driver; only {@link #check} names a JCuda class, and only the backend's live paths call it.
 */
final class CudaErrors {

    static final int CUDA_SUCCESS = 0;
    static final int CUDA_ERROR_INVALID_VALUE = 1;
    static final int CUDA_ERROR_OUT_OF_MEMORY = 2;
    static final int CUDA_ERROR_NOT_INITIALIZED = 3;
    static final int CUDA_ERROR_DEINITIALIZED = 4;
    static final int CUDA_ERROR_NO_DEVICE = 100;
    static final int CUDA_ERROR_INVALID_DEVICE = 101;
    static final int CUDA_ERROR_INVALID_IMAGE = 200;
    static final int CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
    static final int CUDA_ERROR_INVALID_PTX = 218;
    static final int CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
    static final int CUDA_ERROR_NOT_FOUND = 500;
    static final int CUDA_ERROR_NOT_READY = 600;
    static final int CUDA_ERROR_ILLEGAL_ADDRESS = 700;
    static final int CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;
    static final int CUDA_ERROR_LAUNCH_TIMEOUT = 702;
    static final int CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704;
    static final int CUDA_ERROR_LAUNCH_FAILED = 719;

    private CudaErrors() {}

    /** Which arrayd error a CUDA result is. */
    static ErrorCode codeFor(int result) {
        return switch (result) {
            case CUDA_ERROR_OUT_OF_MEMORY -> ErrorCode.RESOURCE_EXHAUSTED;
            case CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES -> ErrorCode.INVALID_ARGUMENT;
            case CUDA_ERROR_NOT_FOUND -> ErrorCode.NOT_FOUND;
            case CUDA_ERROR_LAUNCH_TIMEOUT -> ErrorCode.DEADLINE_EXCEEDED;
            case CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_DEINITIALIZED, CUDA_ERROR_NO_DEVICE, CUDA_ERROR_INVALID_DEVICE ->
                    ErrorCode.UNAVAILABLE;
            // a kernel that faulted poisons its context: nothing on this device will work again
            case CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED -> ErrorCode.INTERNAL;
            case CUDA_ERROR_INVALID_IMAGE, CUDA_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_INVALID_PTX,
                 CUDA_ERROR_UNSUPPORTED_PTX_VERSION -> ErrorCode.INVALID_ARGUMENT;
            default -> ErrorCode.INTERNAL;
        };
    }

    /** {@code "<what>: <name> (<result>)"}: the message every CUDA failure carries. */
    static String message(String what, int result, String name) {
        return what + ": " + name + " (" + result + ")";
    }

    /** The name of {@code result} from the driver's own table (needs the driver). */
    static String name(int result) {
        return jcuda.driver.CUresult.stringFor(result);
    }

    static ArraydException error(int result, String what) {
        return new ArraydException(codeFor(result), message(what, result, name(result)));
    }

    /** Throws unless {@code result} is CUDA_SUCCESS. */
    static void check(int result, String what) {
        if (result != CUDA_SUCCESS) {
            throw error(result, what);
        }
    }
}
