package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import org.jocl.CL;
import org.jocl.CLException;

/** The one place OpenCL status codes become {@link ErrorCode}s. */
final class ClErrors {

    private ClErrors() {}

    static ErrorCode code(int status) {
        return switch (status) {
            case CL.CL_MEM_OBJECT_ALLOCATION_FAILURE, CL.CL_OUT_OF_RESOURCES, CL.CL_OUT_OF_HOST_MEMORY,
                 CL.CL_INVALID_BUFFER_SIZE -> ErrorCode.RESOURCE_EXHAUSTED;
            case CL.CL_DEVICE_NOT_AVAILABLE -> ErrorCode.UNAVAILABLE;
            default -> ErrorCode.INTERNAL;
        };
    }

    /** {@code doing} says what arrayd was doing, e.g. "launch vadd on opencl:0". */
    static ArraydException toArrayd(CLException e, String doing) {
        return new ArraydException(code(e.getStatus()), doing + " failed: " + ClInfo.errorName(e.getStatus())
                + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"), e);
    }

    static ArraydException status(int status, String doing) {
        return new ArraydException(code(status), doing + " failed: " + ClInfo.errorName(status));
    }
}
