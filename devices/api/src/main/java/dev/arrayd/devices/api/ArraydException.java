package dev.arrayd.devices.api;

import java.util.Objects;

/**
 * An expected failure with a precise {@link ErrorCode} and a message naming the bad value,
 * e.g. {@code "dims[1]: -4 (expected: > 0)"}. The server turns it into a gRPC status.
 */
public class ArraydException extends RuntimeException {

    private final ErrorCode code;

    public ArraydException(ErrorCode code, String message) {
        super(message);
        this.code = Objects.requireNonNull(code, "code");
    }

    public ArraydException(ErrorCode code, String message, Throwable cause) {
        super(message, cause);
        this.code = Objects.requireNonNull(code, "code");
    }

    public ErrorCode code() {
        return code;
    }

    public static ArraydException invalid(String message) {
        return new ArraydException(ErrorCode.INVALID_ARGUMENT, message);
    }

    public static ArraydException notFound(String message) {
        return new ArraydException(ErrorCode.NOT_FOUND, message);
    }

    @Override
    public String toString() {
        return code + ": " + getMessage();
    }
}
